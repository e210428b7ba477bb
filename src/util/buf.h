/* A growable byte buffer with a read offset: bytes are appended at the end and
 * consumed from the front, so one cbuf serves as a queue. */
#ifndef CELLA_UTIL_BUF_H
#define CELLA_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct cbuf {
    uint8_t *data;
    size_t off;     /* first unconsumed byte */
    size_t len;     /* end of valid bytes */
    size_t cap;
} cbuf;

void cbuf_init(cbuf *b);
void cbuf_free(cbuf *b);
static inline size_t cbuf_avail(const cbuf *b) { return b->len - b->off; }
/* The unconsumed bytes; an empty string (never NULL) when nothing was ever stored. */
static inline const uint8_t *cbuf_head(const cbuf *b)
{
    return b->data ? b->data + b->off : (const uint8_t *)"";
}
/* Makes room for n more bytes and returns where they go (commit with cbuf_commit). */
uint8_t *cbuf_reserve(cbuf *b, size_t n);
void cbuf_commit(cbuf *b, size_t n);
void cbuf_append(cbuf *b, const void *p, size_t n);
void cbuf_consume(cbuf *b, size_t n);
void cbuf_reset(cbuf *b);

#endif
