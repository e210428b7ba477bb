#include "agent/wire.h"

#include <string.h>

#include "util/alloc.h"

void wire_put_u8(cbuf *b, uint8_t v)
{
    cbuf_append(b, &v, 1);
}

void wire_put_u32(cbuf *b, uint32_t v)
{
    uint8_t x[4];
    wire_le32(x, v);
    cbuf_append(b, x, 4);
}

void wire_put_u64(cbuf *b, uint64_t v)
{
    wire_put_u32(b, (uint32_t)v);
    wire_put_u32(b, (uint32_t)(v >> 32));
}

void wire_put_i64(cbuf *b, int64_t v)
{
    wire_put_u64(b, (uint64_t)v);
}

void wire_put_bytes(cbuf *b, const void *p, size_t n)
{
    wire_put_u32(b, (uint32_t)n);
    cbuf_append(b, p, n);
}

void wire_put_str(cbuf *b, const char *s)
{
    wire_put_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

void wire_put_strv(cbuf *b, char *const *v)
{
    uint32_t n = (uint32_t)cella_strv_len(v);
    wire_put_u32(b, n);
    for (uint32_t i = 0; i < n; i++)
        wire_put_str(b, v[i]);
}

void wire_rd_init(wire_rd *r, const void *p, size_t len)
{
    r->p = p;
    r->len = len;
    r->off = 0;
    r->err = false;
}

static const uint8_t *take(wire_rd *r, size_t n)
{
    if (r->err || r->len - r->off < n) {
        r->err = true;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += n;
    return p;
}

uint8_t wire_get_u8(wire_rd *r)
{
    const uint8_t *p = take(r, 1);
    return p ? p[0] : 0;
}

uint32_t wire_get_u32(wire_rd *r)
{
    const uint8_t *p = take(r, 4);
    if (!p)
        return 0;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t wire_get_u64(wire_rd *r)
{
    uint64_t lo = wire_get_u32(r);
    uint64_t hi = wire_get_u32(r);
    return lo | hi << 32;
}

int64_t wire_get_i64(wire_rd *r)
{
    return (int64_t)wire_get_u64(r);
}

const uint8_t *wire_get_bytes(wire_rd *r, size_t *n)
{
    uint32_t len = wire_get_u32(r);
    const uint8_t *p = take(r, len);
    *n = p ? len : 0;
    return p;
}

char *wire_get_str(wire_rd *r)
{
    size_t n;
    const uint8_t *p = wire_get_bytes(r, &n);
    if (!p)
        return NULL;
    if (memchr(p, '\0', n)) {
        r->err = true;
        return NULL;
    }
    return cella_strndup((const char *)p, n);
}

char **wire_get_strv(wire_rd *r, uint32_t max_count)
{
    uint32_t n = wire_get_u32(r);
    /* Each entry needs at least its 4-byte length: refuse counts the input
     * cannot hold before allocating anything for them. */
    if (r->err || n > max_count || n > (r->len - r->off) / 4) {
        r->err = true;
        return NULL;
    }
    char **v = cella_calloc((size_t)n + 1, sizeof(char *));
    for (uint32_t i = 0; i < n; i++) {
        v[i] = wire_get_str(r);
        if (!v[i]) {
            cella_strv_free(v);
            return NULL;
        }
    }
    return v;
}

bool wire_rd_done(const wire_rd *r)
{
    return !r->err && r->off == r->len;
}
