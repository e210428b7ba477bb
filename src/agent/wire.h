/* The agent protocol's value encoding: little-endian fixed-width integers,
 * and byte strings as a u32 length followed by the bytes. The reader never
 * trusts a length: every read is checked against what remains, and an error
 * is sticky, so a decoder checks once at the end. */
#ifndef CELLA_AGENT_WIRE_H
#define CELLA_AGENT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* A little-endian u32 into four bytes (for one-field payloads built on the stack). */
static inline void wire_le32(uint8_t out[4], uint32_t v)
{
    out[0] = (uint8_t)v;
    out[1] = (uint8_t)(v >> 8);
    out[2] = (uint8_t)(v >> 16);
    out[3] = (uint8_t)(v >> 24);
}

void wire_put_u8(cbuf *b, uint8_t v);
void wire_put_u32(cbuf *b, uint32_t v);
void wire_put_u64(cbuf *b, uint64_t v);
void wire_put_i64(cbuf *b, int64_t v);
void wire_put_bytes(cbuf *b, const void *p, size_t n);
void wire_put_str(cbuf *b, const char *s);          /* NULL is sent as "" */
void wire_put_strv(cbuf *b, char *const *v);        /* count, then each string */

typedef struct wire_rd {
    const uint8_t *p;
    size_t len;
    size_t off;
    bool err;
} wire_rd;

void wire_rd_init(wire_rd *r, const void *p, size_t len);
uint8_t wire_get_u8(wire_rd *r);
uint32_t wire_get_u32(wire_rd *r);
uint64_t wire_get_u64(wire_rd *r);
int64_t wire_get_i64(wire_rd *r);
/* Borrows n bytes from the input (no copy). NULL on error. */
const uint8_t *wire_get_bytes(wire_rd *r, size_t *n);
/* A heap copy, NUL-terminated; strings holding a NUL byte are refused. */
char *wire_get_str(wire_rd *r);
/* A heap NULL-terminated vector; at most max_count entries. */
char **wire_get_strv(wire_rd *r, uint32_t max_count);
/* True when everything was read without error and nothing is left over. */
bool wire_rd_done(const wire_rd *r);

#endif
