/* Text codecs for what crosses the API: base64 (stdin, files), shell-like
 * word splitting (iii's `cmd` shape) and UTF-8 repair (command output is
 * bytes; JSON strings must be valid UTF-8). All pure, all bounded. */
#ifndef CELLA_UTIL_TEXT_H
#define CELLA_UTIL_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

/* RFC 4648 base64 with padding. Decoding accepts the standard alphabet,
 * padding optional, and no whitespace; anything else fails. */
void base64_encode(cbuf *out, const uint8_t *p, size_t n);
int base64_decode(cbuf *out, const char *s, size_t n, cella_err *err);

/* Splits a command line the way Python's shlex.split (POSIX mode) does:
 * whitespace separates words; single quotes keep everything literally;
 * double quotes keep everything but \" \\ \$ \` and backslash-newline;
 * a backslash outside quotes escapes the next character. No expansion of
 * any kind. Unbalanced quotes or a trailing backslash fail. Returns a
 * NULL-terminated vector (free with cella_strv_free). */
int shlex_split(const char *s, char ***out, cella_err *err);
/* True when s holds whitespace (space, tab, newline, CR, VT, FF). */
bool text_has_space(const char *s);

/* Appends p[0..n) to out as valid UTF-8: each byte that does not start a
 * well-formed sequence (overlong, surrogate, > U+10FFFF, truncated) becomes
 * U+FFFD, as Rust's from_utf8_lossy does. */
void utf8_lossy(cbuf *out, const uint8_t *p, size_t n);
/* Length of the longest prefix of p[0..n) that does not end inside a
 * sequence that further bytes could still complete: a streaming consumer
 * keeps the rest (at most 3 bytes) for the next chunk. */
size_t utf8_complete_prefix(const uint8_t *p, size_t n);
/* True when p[0..n) is entirely well-formed UTF-8. */
bool utf8_valid(const uint8_t *p, size_t n);

#endif
