#include "util/buf.h"

#include <stdint.h>
#include <string.h>

#include "util/alloc.h"

void cbuf_init(cbuf *b)
{
    memset(b, 0, sizeof(*b));
}

void cbuf_free(cbuf *b)
{
    cella_free(b->data);
    cbuf_init(b);
}

uint8_t *cbuf_reserve(cbuf *b, size_t n)
{
    /* A buffer never allocated has no address to hand out, even for 0 bytes. */
    if (b->data && b->cap - b->len >= n)
        return b->data + b->len;
    /* Reclaim consumed space before growing, so a queue in steady state stays small. */
    if (b->off > 0) {
        memmove(b->data, b->data + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        if (b->cap - b->len >= n)
            return b->data + b->len;
    }
    if (n > SIZE_MAX / 2 - b->len)
        cella_realloc(NULL, SIZE_MAX);       /* cannot be met: the out-of-memory path */
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    b->data = cella_realloc(b->data, cap);
    b->cap = cap;
    return b->data + b->len;
}

void cbuf_commit(cbuf *b, size_t n)
{
    b->len += n;
}

void cbuf_append(cbuf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    memcpy(cbuf_reserve(b, n), p, n);
    b->len += n;
}

void cbuf_consume(cbuf *b, size_t n)
{
    b->off += n;
    if (b->off >= b->len)
        b->off = b->len = 0;
}

void cbuf_reset(cbuf *b)
{
    b->off = b->len = 0;
}
