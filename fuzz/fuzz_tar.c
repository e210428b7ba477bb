/* libFuzzer target: util/tar.c, which reads archives a client sends to
 * tar-extract. Invariants checked beyond "no crash":
 *  - every 512-byte block decodes to NUL-terminated fields within their
 *    bounds, a mode of at most 07777 and a type that is never '\0';
 *  - the reader over the whole input (fed in pieces of a size the input
 *    picks) ends, with TAR_END or an error, never hands out more content
 *    than an entry declares, and stays ended;
 *  - each entry it returns, encoded again and read back, gives the same
 *    fields (names, size, mode, mtime, uid, gid, type);
 *  - the pax parser on the raw bytes; numbers re-encode to themselves. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

typedef struct mem {
    const uint8_t *p;
    size_t n, off, chunk;
} mem;

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
    mem *m = ctx;
    size_t k = m->n - m->off;
    if (k > n)
        k = n;
    if (k > m->chunk)
        k = m->chunk;
    memcpy(buf, m->p + m->off, k);
    m->off += k;
    return (ssize_t)k;
}

static void check_entry(const tar_entry *e)
{
    if (memchr(e->name, '\0', sizeof(e->name)) == NULL ||
        memchr(e->linkname, '\0', sizeof(e->linkname)) == NULL || e->mode > 07777 || !e->type)
        abort();
}

static void check_blocks(const uint8_t *d, size_t n)
{
    static tar_entry e;
    for (size_t off = 0; off + TAR_BLOCK <= n; off += TAR_BLOCK)
        if (tar_header_decode(d + off, &e) == TAR_OK)
            check_entry(&e);
}

static void check_numbers(const uint8_t *d, size_t n)
{
    int64_t v, w;
    for (size_t len = 1; len <= 12 && len <= n; len++) {
        if (tar_num_decode(d, len, &v) < 0 || len < 8)
            continue;
        /* What a field holds, a 12-byte field holds again. */
        uint8_t f[12];
        tar_num_encode(f, 12, v);
        if (tar_num_decode(f, 12, &w) < 0 || w != v)
            abort();
    }
}

/* e, encoded and read back through the reader, is e again. */
static void check_roundtrip(const tar_entry *e)
{
    static tar_entry back;
    static tar_reader r;
    cbuf b;
    cbuf_init(&b);
    if (tar_encode(&b, e) < 0) {
        if (e->name[0])
            abort();      /* only an empty name cannot be written */
        cbuf_free(&b);
        return;
    }
    mem m = {cbuf_head(&b), cbuf_avail(&b), 0, SIZE_MAX};
    tar_reader_init(&r, mem_read, &m);
    if (tar_next(&r, &back) != TAR_OK || strcmp(back.name, e->name) ||
        strcmp(back.linkname, e->linkname) || back.size != e->size || back.mode != e->mode ||
        back.mtime != e->mtime || back.uid != e->uid || back.gid != e->gid ||
        back.type != e->type)
        abort();
    cbuf_free(&b);
}

static void check_reader(const uint8_t *d, size_t n)
{
    static tar_reader r;
    static tar_entry e;
    static uint8_t buf[4096];
    mem m = {d, n, 0, n ? (size_t)d[0] * 37 + 1 : 1};
    tar_reader_init(&r, mem_read, &m);
    int rc;
    while ((rc = tar_next(&r, &e)) == TAR_OK) {
        check_entry(&e);
        check_roundtrip(&e);
        /* Read part of the content (the rest is skipped by tar_next). */
        uint64_t got = 0;
        for (int i = 0; i < 4; i++) {
            ssize_t k = tar_read(&r, buf, sizeof(buf));
            if (k <= 0)
                break;
            got += (uint64_t)k;
        }
        if (got > e.size)
            abort();
    }
    if (rc == TAR_OK || tar_next(&r, &e) != rc)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    check_blocks(d, n);
    check_numbers(d, n);
    static tar_pax x;
    x.have = 0;
    tar_pax_parse(d, n, &x);
    check_reader(d, n);
    return 0;
}
