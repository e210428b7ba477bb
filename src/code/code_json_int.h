/* Private helpers of the host-boundary code (code_json.c, code_json_enc.c,
 * code_dump.c): text checks shared by the JSON codec and the dump loader. */
#ifndef CELLA_CODE_JSON_INT_H
#define CELLA_CODE_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at s (1..4), or 0 when it is
 * not one (overlong forms, surrogates and code points past U+10FFFF are
 * refused, as RFC 3629 says). */
size_t code_json_utf8_seq(const unsigned char *s, size_t n);
/* s[0..n) is well-formed UTF-8 (NUL bytes allowed). */
bool code_json_utf8_valid(const char *s, size_t n);

/* Base64 (RFC 4648, standard alphabet, padded). encode: writes
 * code_json_b64_len(n) bytes to out. decode: 0 and *outn set, or -1 when s is
 * not canonical base64; out holds at least n / 4 * 3 bytes. */
static inline size_t code_json_b64_len(size_t n) { return (n + 2) / 3 * 4; }
void code_json_b64_encode(const unsigned char *s, size_t n, char *out);
int code_json_b64_decode(const char *s, size_t n, unsigned char *out, size_t *outn);

#endif
