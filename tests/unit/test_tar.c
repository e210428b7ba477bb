/* util/tar.c: numbers, checksums, pax records, header encode/decode and the
 * streaming reader, over archives built in memory. GNU tar compatibility
 * both ways is checked against real tar files (fuzz/corpus/tar and the
 * manual runs described in fs_tar.c), not here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/tar.h"

/* ---- helpers ------------------------------------------------------------------ */

typedef struct mem {
    const uint8_t *p;
    size_t n, off;
    size_t chunk;                 /* at most this much per read: partial reads */
} mem;

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
    mem *m = ctx;
    size_t k = m->n - m->off;
    if (k > n)
        k = n;
    if (m->chunk && k > m->chunk)
        k = m->chunk;
    memcpy(buf, m->p + m->off, k);
    m->off += k;
    return (ssize_t)k;
}

static tar_entry *entry(const char *name, char type, uint64_t size)
{
    static tar_entry e;
    memset(&e, 0, sizeof(e));
    snprintf(e.name, sizeof(e.name), "%s", name);
    e.type = type;
    e.size = size;
    e.mode = 0644;
    e.mtime = 1700000000;
    e.uid = 1000;
    e.gid = 1000;
    return &e;
}

/* Appends e's headers, then size bytes of fill, padded. */
static void add(cbuf *b, const tar_entry *e, char fill)
{
    assert_int_equal(tar_encode(b, e), 0);
    size_t padded = (size_t)(e->size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
    uint8_t *d = cbuf_reserve(b, padded);
    memset(d, 0, padded);
    memset(d, fill, (size_t)e->size);
    cbuf_commit(b, padded);
}

static void end(cbuf *b)
{
    uint8_t *z = cbuf_reserve(b, 2 * TAR_BLOCK);
    memset(z, 0, 2 * TAR_BLOCK);
    cbuf_commit(b, 2 * TAR_BLOCK);
}

/* A header block with its checksum fixed after the caller's edits. */
static void reseal(uint8_t *h)
{
    memset(h + 148, ' ', 8);
    snprintf((char *)h + 148, 8, "%06o", tar_checksum(h));
    h[155] = ' ';
}

/* tar_read returns what is there, like read(2): loop for n. */
static size_t read_n(tar_reader *r, char *buf, size_t n)
{
    size_t got = 0;
    for (ssize_t k; got < n && (k = tar_read(r, buf + got, n - got)) > 0;)
        got += (size_t)k;
    return got;
}

static tar_reader *reader(mem *m)
{
    static tar_reader r;
    tar_reader_init(&r, mem_read, m);
    return &r;
}

/* ---- numbers ------------------------------------------------------------------- */

static void test_num_octal(void **state)
{
    int64_t v;
    assert_int_equal(tar_num_decode((const uint8_t *)"0000644\0", 8, &v), 0);
    assert_int_equal(v, 0644);
    assert_int_equal(tar_num_decode((const uint8_t *)"   644  ", 8, &v), 0);
    assert_int_equal(v, 0644);
    assert_int_equal(tar_num_decode((const uint8_t *)"\0\0\0\0\0\0\0\0", 8, &v), 0);
    assert_int_equal(v, 0);                                  /* blank */
    assert_int_equal(tar_num_decode((const uint8_t *)"777777777777", 12, &v), 0);
    assert_int_equal(v, 0777777777777LL);                    /* full field, no NUL */
    assert_int_equal(tar_num_decode((const uint8_t *)"0000648\0", 8, &v), -1);
    assert_int_equal(tar_num_decode((const uint8_t *)"00 0644\0", 8, &v), -1);
    assert_int_equal(tar_num_decode((const uint8_t *)"-000644\0", 8, &v), -1);
    /* 22 octal digits pass int64: refused, never wrapped. */
    uint8_t big[24];
    memset(big, '7', sizeof(big));
    assert_int_equal(tar_num_decode(big, sizeof(big), &v), -1);
}

static void test_num_base256(void **state)
{
    int64_t v;
    uint8_t f[12] = {0x80, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0};
    assert_int_equal(tar_num_decode(f, 12, &v), 0);
    assert_int_equal(v, (int64_t)2 << 32);
    uint8_t neg[12];
    memset(neg, 0xff, sizeof(neg));
    assert_int_equal(tar_num_decode(neg, 12, &v), 0);
    assert_int_equal(v, -1);
    /* Significant bits above int64: refused. */
    uint8_t over[12] = {0x80, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(tar_num_decode(over, 12, &v), -1);
    uint8_t top[12] = {0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(tar_num_decode(top, 12, &v), -1);
    uint8_t other[8] = {0x81, 0, 0, 0, 0, 0, 0, 1};
    assert_int_equal(tar_num_decode(other, 8, &v), -1);
}

static void test_num_roundtrip(void **state)
{
    const int64_t vals[] = {0, 1, 0644, 07777777, 010000000, TAR_OCTAL11_MAX,
                            TAR_OCTAL11_MAX + 1, (int64_t)9 << 30, INT64_MAX, -1, -100,
                            INT64_MIN};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        uint8_t f[12];
        int64_t v;
        tar_num_encode(f, 12, vals[i]);
        assert_int_equal(tar_num_decode(f, 12, &v), 0);
        assert_int_equal(v, vals[i]);
        /* 8-byte fields: base-256 holds 7 bytes; beyond, 0 (pax carries it). */
        tar_num_encode(f, 8, vals[i]);
        assert_int_equal(tar_num_decode(f, 8, &v), 0);
        if (vals[i] >= -((int64_t)1 << 55) && vals[i] < ((int64_t)1 << 56))
            assert_int_equal(v, vals[i]);
        else
            assert_int_equal(v, 0);
    }
    uint8_t f[12];
    tar_num_encode(f, 12, 0644);
    assert_memory_equal(f, "00000000644\0", 12);
    tar_num_encode(f, 8, 07777777);
    assert_memory_equal(f, "7777777\0", 8);
    tar_num_encode(f, 8, 010000000);
    assert_int_equal(f[0], 0x80);                            /* no longer octal */
}

/* ---- headers ----------------------------------------------------------------------- */

static void test_header_roundtrip(void **state)
{
    cbuf b;
    cbuf_init(&b);
    tar_entry *e = entry("dir/file.txt", '0', 1234);
    e->mode = 04755;
    assert_int_equal(tar_encode(&b, e), 0);
    assert_int_equal(cbuf_avail(&b), TAR_BLOCK);
    const uint8_t *h = cbuf_head(&b);
    assert_memory_equal(h + 257, "ustar\0" "00", 8);
    tar_entry d;
    assert_int_equal(tar_header_decode(h, &d), TAR_OK);
    assert_string_equal(d.name, "dir/file.txt");
    assert_int_equal(d.size, 1234);
    assert_int_equal(d.mode, 04755);
    assert_int_equal(d.mtime, 1700000000);
    assert_int_equal(d.uid, 1000);
    assert_int_equal(d.type, '0');
    /* One bit off anywhere: the checksum says so. */
    uint8_t bad[TAR_BLOCK];
    memcpy(bad, h, TAR_BLOCK);
    bad[3] ^= 1;
    assert_int_equal(tar_header_decode(bad, &d), TAR_ECHECKSUM);
    memset(bad, 0, TAR_BLOCK);
    assert_int_equal(tar_header_decode(bad, &d), TAR_END);
    /* A blank checksum field is no checksum. */
    memcpy(bad, h, TAR_BLOCK);
    memset(bad + 148, ' ', 8);
    assert_int_equal(tar_header_decode(bad, &d), TAR_ECHECKSUM);
    /* A garbage number behind a valid checksum. */
    memcpy(bad, h, TAR_BLOCK);
    memcpy(bad + 124, "12x", 3);
    reseal(bad);
    assert_int_equal(tar_header_decode(bad, &d), TAR_EFIELD);
    cbuf_free(&b);
}

static void test_header_fields_bounded(void **state)
{
    /* Every text field full, no NUL anywhere: copied to its length. */
    uint8_t h[TAR_BLOCK];
    memset(h, 'a', TAR_BLOCK);
    memcpy(h + 100, "0000644\0" "0000000\0" "0000000\0" "00000000000\0" "00000000000\0", 48);
    h[156] = '2';
    memcpy(h + 257, "ustar\0" "00", 8);
    memcpy(h + 329, "0000000\0" "0000000\0", 16);
    reseal(h);
    tar_entry d;
    assert_int_equal(tar_header_decode(h, &d), TAR_OK);
    assert_int_equal(strlen(d.name), 155 + 1 + 100);         /* prefix "/" name */
    assert_int_equal(d.name[155], '/');
    assert_int_equal(strlen(d.linkname), 100);
    /* GNU magic: those 155 bytes are not a prefix. */
    memcpy(h + 257, "ustar  \0", 8);
    reseal(h);
    assert_int_equal(tar_header_decode(h, &d), TAR_OK);
    assert_int_equal(strlen(d.name), 100);
    /* A v7 '\0' type reads as a regular file. */
    h[156] = '\0';
    reseal(h);
    assert_int_equal(tar_header_decode(h, &d), TAR_OK);
    assert_int_equal(d.type, '0');
}

static void test_signed_checksum(void **state)
{
    cbuf b;
    cbuf_init(&b);
    assert_int_equal(tar_encode(&b, entry("caf\xc3\xa9", '0', 0)), 0);
    uint8_t h[TAR_BLOCK];
    memcpy(h, cbuf_head(&b), TAR_BLOCK);
    int sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++)
        sum += (i >= 148 && i < 156) ? ' ' : (int)(signed char)h[i];
    snprintf((char *)h + 148, 8, "%06o", (unsigned)sum);
    tar_entry d;
    assert_int_equal(tar_header_decode(h, &d), TAR_OK);
    cbuf_free(&b);
}

/* ---- pax ------------------------------------------------------------------------------ */

static void test_pax_record_length(void **state)
{
    /* Around every change of digit count the length must count itself. */
    char val[1100];
    memset(val, 'v', sizeof(val));
    for (size_t vl = 0; vl < sizeof(val); vl++) {
        cbuf b;
        cbuf_init(&b);
        tar_pax_record(&b, "path", val, vl);
        size_t n = cbuf_avail(&b);
        assert_int_equal((size_t)strtoul((const char *)cbuf_head(&b), NULL, 10), n);
        tar_pax x = {0};
        if (vl && vl < TAR_NAME_MAX) {
            assert_int_equal(tar_pax_parse(cbuf_head(&b), n, &x), TAR_OK);
            assert_int_equal(strlen(x.path), vl);
        }
        cbuf_free(&b);
    }
}

static void test_pax_parse(void **state)
{
    tar_pax x = {0};
    const char *ok = "30 mtime=1700000000.123456789\n" "16 size=1234567\n"
                     "12 uid=4242\n" "22 GNU.sparse.major=1\n" "19 linkpath=target\n"
                     "13 path=name\n" "21 SCHILY.xattr.x=yz\n";
    assert_int_equal(tar_pax_parse((const uint8_t *)ok, strlen(ok), &x), TAR_OK);
    assert_int_equal(x.mtime, 1700000000);
    assert_int_equal(x.size, 1234567);
    assert_int_equal(x.uid, 4242);
    assert_string_equal(x.path, "name");
    assert_string_equal(x.linkpath, "target");
    assert_true(x.have & TAR_PAX_SPARSE);
    assert_false(x.have & TAR_PAX_GID);
    /* An empty path restores the header's name. */
    assert_int_equal(tar_pax_parse((const uint8_t *)"8 path=\n", 8, &x), TAR_OK);
    assert_false(x.have & TAR_PAX_PATH);
    assert_int_equal(tar_pax_parse((const uint8_t *)"12 mtime=-5\n", 12, &x), TAR_OK);
    assert_int_equal(x.mtime, -5);
    static const char *bad[] = {
        "13 path=name",           /* no newline */
        "14 path=name\n",         /* length past the end */
        "12 path=name\n",         /* length short of the newline */
        "x3 path=name\n",         /* not a number */
        "13path=name\n\n",        /* no space */
        "8 pathx\n",              /* no '=' */
        "7 =val\n",               /* empty key */
        "13 size=-123\n",         /* negative size */
        "13 size=12a3\n",         /* not a number */
        "11 uid=1.5\n",           /* fraction outside mtime */
        "0 \n",
        "2 \n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tar_pax y = {0};
        assert_int_equal(tar_pax_parse((const uint8_t *)bad[i], strlen(bad[i]), &y), TAR_EPAX);
    }
    /* A NUL inside a path would cut the name short: refused. */
    tar_pax y = {0};
    assert_int_equal(tar_pax_parse((const uint8_t *)"13 path=a\0cd\n", 13, &y), TAR_EPAX);
    /* A path longer than any *at call takes. */
    cbuf b;
    cbuf_init(&b);
    char *longp = cella_malloc(TAR_NAME_MAX);
    memset(longp, 'p', TAR_NAME_MAX);
    tar_pax_record(&b, "path", longp, TAR_NAME_MAX);
    assert_int_equal(tar_pax_parse(cbuf_head(&b), cbuf_avail(&b), &y), TAR_ELONG);
    cella_free(longp);
    cbuf_free(&b);
}

/* ---- encode ------------------------------------------------------------------------------ */

static void read_back(const cbuf *b, tar_entry *out)
{
    mem m = {cbuf_head(b), cbuf_avail(b), 0, 0};
    tar_reader *r = reader(&m);
    assert_int_equal(tar_next(r, out), TAR_OK);
}

static void test_encode_names(void **state)
{
    char name[300];
    tar_entry d;
    /* 100 bytes: the name field, full, no pax. */
    memset(name, 'n', 100);
    name[100] = '\0';
    cbuf b;
    cbuf_init(&b);
    assert_int_equal(tar_encode(&b, entry(name, '0', 0)), 0);
    assert_int_equal(cbuf_avail(&b), TAR_BLOCK);
    read_back(&b, &d);
    assert_string_equal(d.name, name);
    /* 150 bytes with a '/' that splits it: prefix + name, no pax. */
    memset(name, 'p', 120);
    name[60] = '/';
    memcpy(name + 120, "/", 1);
    memset(name + 121, 'f', 29);
    name[150] = '\0';
    cbuf_reset(&b);
    assert_int_equal(tar_encode(&b, entry(name, '5', 0)), 0);
    assert_int_equal(cbuf_avail(&b), TAR_BLOCK);
    read_back(&b, &d);
    assert_string_equal(d.name, name);
    /* 101 bytes without a '/': only pax can carry it. */
    memset(name, 'q', 101);
    name[101] = '\0';
    cbuf_reset(&b);
    assert_int_equal(tar_encode(&b, entry(name, '0', 0)), 0);
    assert_int_equal(cbuf_avail(&b), 3 * TAR_BLOCK);
    assert_int_equal(cbuf_head(&b)[156], 'x');
    read_back(&b, &d);
    assert_string_equal(d.name, name);
    /* A name whose only split leaves an empty name part: pax too. */
    memset(name, 'r', 120);
    name[120] = '/';
    name[121] = '\0';
    cbuf_reset(&b);
    assert_int_equal(tar_encode(&b, entry(name, '5', 0)), 0);
    read_back(&b, &d);
    assert_string_equal(d.name, name);
    /* Nothing to write. */
    assert_int_equal(tar_encode(&b, entry("", '0', 0)), -1);
    cbuf_free(&b);
}

static void test_encode_pax_fields(void **state)
{
    cbuf b;
    cbuf_init(&b);
    tar_entry *e = entry("big", '0', (uint64_t)9 << 30);
    e->mtime = -100;
    e->uid = 4000000000u;
    e->gid = 5;
    assert_int_equal(tar_encode(&b, e), 0);
    assert_int_equal(cbuf_head(&b)[156], 'x');
    tar_entry d;
    read_back(&b, &d);
    assert_int_equal(d.size, (uint64_t)9 << 30);
    assert_int_equal(d.mtime, -100);
    assert_int_equal(d.uid, 4000000000u);
    assert_int_equal(d.gid, 5);
    /* A link target past 100 bytes. */
    char target[200];
    memset(target, 't', 199);
    target[199] = '\0';
    e = entry("l", '2', 0);
    strcpy(e->linkname, target);
    cbuf_reset(&b);
    assert_int_equal(tar_encode(&b, e), 0);
    read_back(&b, &d);
    assert_int_equal(d.type, '2');
    assert_string_equal(d.linkname, target);
    /* Bytes that are not UTF-8 get hdrcharset=BINARY. */
    char name[200];
    memset(name, 'b', 150);
    name[7] = (char)0xff;
    name[150] = '\0';
    cbuf_reset(&b);
    assert_int_equal(tar_encode(&b, entry(name, '0', 0)), 0);
    assert_non_null(memmem(cbuf_head(&b), cbuf_avail(&b), "hdrcharset=BINARY", 17));
    read_back(&b, &d);
    assert_string_equal(d.name, name);
    cbuf_free(&b);
}

/* ---- reader ---------------------------------------------------------------------------------- */

static void test_reader_stream(void **state)
{
    cbuf b;
    cbuf_init(&b);
    char longname[600];
    memset(longname, 'L', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    add(&b, entry("a.txt", '0', 700), 'a');
    add(&b, entry("sub/", '5', 0), 0);
    add(&b, entry(longname, '0', 5), 'b');
    add(&b, entry("skipped", '0', 100000), 'c');
    add(&b, entry("last", '0', 1), 'd');
    end(&b);
    for (size_t chunk = 0; chunk < 600; chunk = chunk ? chunk * 7 : 1) {
        mem m = {cbuf_head(&b), cbuf_avail(&b), 0, chunk};
        tar_reader *r = reader(&m);
        tar_entry *e = cella_malloc(sizeof(*e));
        char buf[1000];
        assert_int_equal(tar_next(r, e), TAR_OK);
        assert_string_equal(e->name, "a.txt");
        size_t got = 0;
        for (ssize_t k; (k = tar_read(r, buf, 333)) > 0; got += (size_t)k)
            for (ssize_t i = 0; i < k; i++)
                assert_int_equal(buf[i], 'a');
        assert_int_equal(got, 700);
        assert_int_equal(tar_next(r, e), TAR_OK);
        assert_string_equal(e->name, "sub/");
        assert_int_equal(e->type, '5');
        assert_int_equal(tar_next(r, e), TAR_OK);
        assert_string_equal(e->name, longname);
        assert_int_equal(read_n(r, buf, sizeof(buf)), 5);
        assert_int_equal(tar_next(r, e), TAR_OK);
        assert_string_equal(e->name, "skipped");
        assert_int_equal(read_n(r, buf, 10), 10);            /* the rest is skipped */
        assert_int_equal(tar_next(r, e), TAR_OK);
        assert_string_equal(e->name, "last");
        assert_int_equal(tar_next(r, e), TAR_END);
        assert_int_equal(tar_next(r, e), TAR_END);
        assert_int_equal(r->headers, 7);                      /* the pax header counts */
        cella_free(e);
    }
    cbuf_free(&b);
}

static void test_reader_gnu_and_meta(void **state)
{
    cbuf b;
    cbuf_init(&b);
    char name[300];
    memset(name, 'g', 299);
    name[299] = '\0';
    /* GNU: "././@LongLink" of type 'L' holding the name, NUL included. */
    add(&b, entry("././@LongLink", 'L', 300), 0);
    memcpy((uint8_t *)cbuf_head(&b) + cbuf_avail(&b) - TAR_BLOCK, name, 299);
    add(&b, entry("ggg-cut", '0', 3), 'z');
    /* 'g' records are skipped, whatever they hold. */
    add(&b, entry("global", 'g', 600), '?');
    /* A directory whose size field lies: no content follows it. */
    assert_int_equal(tar_encode(&b, entry("d/", '5', 4096)), 0);
    add(&b, entry("after", '0', 0), 0);
    end(&b);
    mem m = {cbuf_head(&b), cbuf_avail(&b), 0, 0};
    tar_reader *r = reader(&m);
    tar_entry *e = cella_malloc(sizeof(*e));
    assert_int_equal(tar_next(r, e), TAR_OK);
    assert_string_equal(e->name, name);
    assert_int_equal(e->size, 3);
    assert_int_equal(tar_next(r, e), TAR_OK);
    assert_string_equal(e->name, "d/");
    assert_int_equal(e->size, 0);
    assert_int_equal(tar_next(r, e), TAR_OK);
    assert_string_equal(e->name, "after");
    assert_int_equal(tar_next(r, e), TAR_END);
    cella_free(e);
    cbuf_free(&b);
}

static int read_all_status(const uint8_t *p, size_t n)
{
    mem m = {p, n, 0, 0};
    tar_reader *r = reader(&m);
    tar_entry *e = cella_malloc(sizeof(*e));
    int rc;
    char buf[4096];
    while ((rc = tar_next(r, e)) == TAR_OK) {
        ssize_t k;
        while ((k = tar_read(r, buf, sizeof(buf))) > 0)
            ;
        if (k < 0) {
            rc = (int)k;
            break;
        }
    }
    cella_free(e);
    return rc;
}

static void test_reader_errors(void **state)
{
    cbuf b;
    cbuf_init(&b);
    add(&b, entry("a", '0', 3000), 'a');
    end(&b);
    const uint8_t *p = cbuf_head(&b);
    size_t n = cbuf_avail(&b);
    assert_int_equal(read_all_status(p, n), TAR_END);
    assert_int_equal(read_all_status(p, 0), TAR_ETRUNC);      /* empty input */
    assert_int_equal(read_all_status(p, 300), TAR_ETRUNC);    /* inside the header */
    assert_int_equal(read_all_status(p, 1000), TAR_ETRUNC);   /* inside the content */
    assert_int_equal(read_all_status(p, 512 * 7), TAR_ETRUNC); /* no end block */
    static const uint8_t gz[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    assert_int_equal(read_all_status(gz, sizeof(gz)), TAR_ECOMPRESSED);
    uint8_t xz[TAR_BLOCK] = {0xfd, '7', 'z', 'X', 'Z', 0};
    assert_int_equal(read_all_status(xz, sizeof(xz)), TAR_ECOMPRESSED);
    uint8_t junk[TAR_BLOCK];
    memset(junk, 'j', sizeof(junk));
    assert_int_equal(read_all_status(junk, sizeof(junk)), TAR_ECHECKSUM);

    /* A pax header past TAR_PAX_MAX is refused before it is read. */
    cbuf_reset(&b);
    assert_int_equal(tar_encode(&b, entry("PaxHeaders/x", 'x', TAR_PAX_MAX + 1)), 0);
    assert_int_equal(read_all_status(cbuf_head(&b), cbuf_avail(&b)), TAR_EPAX);
    /* A GNU long name without room for its NUL. */
    cbuf_reset(&b);
    add(&b, entry("././@LongLink", 'L', TAR_NAME_MAX), 'n');
    add(&b, entry("x", '0', 0), 0);
    end(&b);
    assert_int_equal(read_all_status(cbuf_head(&b), cbuf_avail(&b)), TAR_ELONG);
    /* A pax size applies to the content that follows. */
    cbuf_reset(&b);
    cbuf pax;
    cbuf_init(&pax);
    tar_pax_record(&pax, "size", "5", 1);
    assert_int_equal(tar_encode(&b, entry("PaxHeaders/s", 'x', cbuf_avail(&pax))), 0);
    uint8_t *d = cbuf_reserve(&b, TAR_BLOCK);
    memset(d, 0, TAR_BLOCK);
    memcpy(d, cbuf_head(&pax), cbuf_avail(&pax));
    cbuf_commit(&b, TAR_BLOCK);
    add(&b, entry("s", '0', 0), 0);           /* the header says 0 */
    d = cbuf_reserve(&b, TAR_BLOCK);
    memset(d, 0, TAR_BLOCK);
    memset(d, 's', 5);
    cbuf_commit(&b, TAR_BLOCK);
    end(&b);
    mem m = {cbuf_head(&b), cbuf_avail(&b), 0, 0};
    tar_reader *r = reader(&m);
    tar_entry *e = cella_malloc(sizeof(*e));
    assert_int_equal(tar_next(r, e), TAR_OK);
    assert_int_equal(e->size, 5);
    assert_int_equal(tar_next(r, e), TAR_END);
    cella_free(e);
    cbuf_free(&pax);
    cbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_num_octal),
        cmocka_unit_test(test_num_base256),
        cmocka_unit_test(test_num_roundtrip),
        cmocka_unit_test(test_header_roundtrip),
        cmocka_unit_test(test_header_fields_bounded),
        cmocka_unit_test(test_signed_checksum),
        cmocka_unit_test(test_pax_record_length),
        cmocka_unit_test(test_pax_parse),
        cmocka_unit_test(test_encode_names),
        cmocka_unit_test(test_encode_pax_fields),
        cmocka_unit_test(test_reader_stream),
        cmocka_unit_test(test_reader_gnu_and_meta),
        cmocka_unit_test(test_reader_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
