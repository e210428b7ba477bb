/* ustar/pax codec and streaming reader (tar.h has the contract). Every
 * field read from an archive is treated as hostile: lengths are bounded by
 * the field, numbers by int64, extended headers by TAR_PAX_MAX. */
#include "util/tar.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/text.h"

/* Header layout (POSIX ustar): offset and length of each field. */
#define H_NAME 0, 100
#define H_MODE 100, 8
#define H_UID 108, 8
#define H_GID 116, 8
#define H_SIZE 124, 12
#define H_MTIME 136, 12
#define H_CHKSUM_AT 148
#define H_CHKSUM H_CHKSUM_AT, 8
#define H_TYPE 156
#define H_LINK 157, 100
#define H_MAGIC 257
#define H_DEVMAJOR 329, 8
#define H_DEVMINOR 337, 8
#define H_PREFIX_AT 345
#define H_PREFIX H_PREFIX_AT, 155

const char *tar_strerror(int st)
{
    switch (st) {
    case TAR_OK:
        return "ok";
    case TAR_END:
        return "end of archive";
    case TAR_ECHECKSUM:
        return "bad header checksum";
    case TAR_EFIELD:
        return "malformed numeric field";
    case TAR_ELONG:
        return "name longer than 4095 bytes";
    case TAR_EPAX:
        return "malformed pax extended header";
    case TAR_ETRUNC:
        return "truncated archive";
    case TAR_EREAD:
        return "read error";
    case TAR_ECOMPRESSED:
        return "compressed archive";
    default:
        return "unknown error";
    }
}

/* ---- numbers and checksum ----------------------------------------------------- */

unsigned tar_checksum(const uint8_t h[TAR_BLOCK])
{
    unsigned sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++)
        sum += (i >= H_CHKSUM_AT && i < H_CHKSUM_AT + 8) ? ' ' : h[i];
    return sum;
}

/* Some old writers summed signed chars: accepted too, as GNU tar does. */
static int checksum_signed(const uint8_t h[TAR_BLOCK])
{
    int sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++)
        sum += (i >= H_CHKSUM_AT && i < H_CHKSUM_AT + 8) ? ' ' : (int)(signed char)h[i];
    return sum;
}

int tar_num_decode(const uint8_t *f, size_t len, int64_t *out)
{
    if (len && (f[0] == 0x80 || f[0] == 0xff)) {
        /* Base-256, big-endian two's complement after the marker bit:
         * only the last 8 bytes may be significant. */
        bool neg = f[0] == 0xff;
        size_t sig = len < 8 ? len : 8;
        for (size_t i = 0; i < len - sig; i++)
            if (f[i] != (neg ? 0xff : (i ? 0x00 : 0x80)))
                return -1;
        uint64_t u = neg ? UINT64_MAX : 0;
        for (size_t i = len - sig; i < len; i++) {
            uint8_t b = f[i];
            if (i == 0 && !neg)
                b &= 0x7f;
            u = (u << 8) | b;
        }
        if (neg ? !(u >> 63) : (u >> 63))
            return -1;
        *out = (int64_t)u;
        return 0;
    }
    size_t i = 0;
    while (i < len && f[i] == ' ')
        i++;
    uint64_t v = 0;
    for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
        if (v > (uint64_t)INT64_MAX >> 3)
            return -1;
        v = v << 3 | (uint64_t)(f[i] - '0');
    }
    for (; i < len; i++)
        if (f[i] != ' ' && f[i] != '\0')
            return -1;
    *out = (int64_t)v;
    return 0;
}

void tar_num_encode(uint8_t *f, size_t len, int64_t v)
{
    /* len-1 octal digits (3 bits each) and a NUL, when v fits. */
    if (v >= 0 && ((len - 1) * 3 >= 63 || (uint64_t)v >> ((len - 1) * 3) == 0)) {
        f[len - 1] = '\0';
        uint64_t u = (uint64_t)v;
        for (size_t i = len - 1; i-- > 0; u >>= 3)
            f[i] = (uint8_t)('0' + (u & 7));
        return;
    }
    /* Base-256 takes the len-1 bytes after a marker byte (0x80, or 0xff
     * for a negative value, as GNU tar reads it). A value that does not
     * fit even so is written as 0: a pax record carries it. */
    size_t bits = (len - 1) * 8;
    if (bits < 64 && (v >= 0 ? (uint64_t)v >> bits : (uint64_t)~v >> bits)) {
        memset(f, '0', len - 1);
        f[len - 1] = '\0';
        return;
    }
    uint64_t u = (uint64_t)v;
    for (size_t i = len; i-- > 1;) {
        f[i] = (uint8_t)(u & 0xff);
        u = v < 0 ? (u >> 8) | (UINT64_C(0xff) << 56) : u >> 8;
    }
    f[0] = v < 0 ? 0xff : 0x80;
}

/* ---- header decode ---------------------------------------------------------------- */

/* A field copied with its length bound: a full field has no NUL. */
static size_t copy_field(char *dst, const uint8_t *h, size_t off, size_t len)
{
    const uint8_t *f = h + off;
    const uint8_t *z = memchr(f, '\0', len);
    size_t n = z ? (size_t)(z - f) : len;
    memcpy(dst, f, n);
    dst[n] = '\0';
    return n;
}

static int num_field(const uint8_t *h, size_t off, size_t len, int64_t *out)
{
    return tar_num_decode(h + off, len, out);
}

static bool zero_block(const uint8_t h[TAR_BLOCK])
{
    for (size_t i = 0; i < TAR_BLOCK; i++)
        if (h[i])
            return false;
    return true;
}

int tar_header_decode(const uint8_t h[TAR_BLOCK], tar_entry *e)
{
    if (zero_block(h))
        return TAR_END;
    int64_t sum, mode, uid, gid, size, mtime;
    /* A blank checksum field (all NULs or spaces) decodes as 0, which no
     * non-zero block sums to: refused below like any mismatch. */
    if (num_field(h, H_CHKSUM, &sum) < 0 ||
        (sum != (int64_t)tar_checksum(h) && sum != checksum_signed(h)))
        return TAR_ECHECKSUM;
    if (num_field(h, H_MODE, &mode) < 0 || num_field(h, H_UID, &uid) < 0 ||
        num_field(h, H_GID, &gid) < 0 || num_field(h, H_SIZE, &size) < 0 ||
        num_field(h, H_MTIME, &mtime) < 0 || size < 0 || uid < 0 || gid < 0)
        return TAR_EFIELD;
    e->size = (uint64_t)size;
    e->mode = (uint32_t)(mode & 07777);
    e->mtime = mtime;
    e->uid = (uint64_t)uid;
    e->gid = (uint64_t)gid;
    e->type = h[H_TYPE] ? (char)h[H_TYPE] : '0';
    size_t n = 0;
    /* Only POSIX ustar has a prefix: GNU's magic ("ustar  ") keeps other
     * things (times, sparse maps) in those bytes. */
    if (!memcmp(h + H_MAGIC, "ustar\0", 6) && h[H_PREFIX_AT]) {
        n = copy_field(e->name, h, H_PREFIX);
        e->name[n++] = '/';
    }
    copy_field(e->name + n, h, H_NAME);
    copy_field(e->linkname, h, H_LINK);
    return TAR_OK;
}

/* ---- pax records ------------------------------------------------------------------- */

static size_t digits(size_t v)
{
    size_t d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

void tar_pax_record(cbuf *out, const char *key, const char *val, size_t vlen)
{
    /* The length counts its own digits: grow it until it is stable. */
    size_t base = strlen(key) + vlen + 3;      /* ' ', '=', '\n' */
    size_t len = base + digits(base);
    while (base + digits(len) != len)
        len = base + digits(len);
    char num[24];
    int k = snprintf(num, sizeof(num), "%zu ", len);
    cbuf_append(out, num, (size_t)k);
    cbuf_append(out, key, strlen(key));
    cbuf_append(out, "=", 1);
    cbuf_append(out, val, vlen);
    cbuf_append(out, "\n", 1);
}

/* A decimal value of a pax record, with an optional sign and, for times, a
 * fraction that is dropped. */
static int pax_number(const char *v, size_t n, bool frac, bool sign, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (sign && i < n && v[i] == '-') {
        neg = true;
        i++;
    }
    if (i == n)
        return -1;
    /* Exactly the int64 range: INT64_MIN too, which base-256 can carry. */
    uint64_t u = 0, limit = (uint64_t)INT64_MAX + neg;
    size_t start = i;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
        uint64_t dg = (uint64_t)(v[i] - '0');
        if (u > (limit - dg) / 10)
            return -1;
        u = u * 10 + dg;
    }
    if (i == start)
        return -1;
    if (frac && i < n && v[i] == '.')
        for (i++; i < n && v[i] >= '0' && v[i] <= '9'; i++)
            ;
    if (i != n)
        return -1;
    *out = !neg ? (int64_t)u : u > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)u;
    return 0;
}

/* A path value: no NUL inside (it would cut the name short), and short
 * enough for any *at call. An empty value restores the header's field. */
static int pax_path(char *dst, const char *v, size_t n, unsigned bit, unsigned *have)
{
    if (memchr(v, '\0', n))
        return TAR_EPAX;
    if (n >= TAR_NAME_MAX)
        return TAR_ELONG;
    memcpy(dst, v, n);
    dst[n] = '\0';
    *have = n ? *have | bit : *have & ~bit;
    return TAR_OK;
}

static int pax_apply(tar_pax *x, const char *k, size_t kl, const char *v, size_t vl)
{
#define KEY(s) (kl == sizeof(s) - 1 && !memcmp(k, s, kl))
    int64_t num;
    if (KEY("path"))
        return pax_path(x->path, v, vl, TAR_PAX_PATH, &x->have);
    if (KEY("linkpath"))
        return pax_path(x->linkpath, v, vl, TAR_PAX_LINKPATH, &x->have);
    if (kl >= 11 && !memcmp(k, "GNU.sparse.", 11)) {
        x->have |= TAR_PAX_SPARSE;
        return TAR_OK;
    }
    bool size = KEY("size"), mtime = KEY("mtime"), uid = KEY("uid"), gid = KEY("gid");
    if (!size && !mtime && !uid && !gid)
        return TAR_OK;
    if (pax_number(v, vl, mtime, mtime, &num) < 0)
        return TAR_EPAX;
    if (size) {
        x->size = (uint64_t)num;
        x->have |= TAR_PAX_SIZE;
    } else if (mtime) {
        x->mtime = num;
        x->have |= TAR_PAX_MTIME;
    } else if (uid) {
        x->uid = (uint64_t)num;
        x->have |= TAR_PAX_UID;
    } else {
        x->gid = (uint64_t)num;
        x->have |= TAR_PAX_GID;
    }
    return TAR_OK;
#undef KEY
}

int tar_pax_parse(const uint8_t *p, size_t n, tar_pax *x)
{
    const char *s = (const char *)p;
    while (n) {
        /* "LEN key=value\n": LEN decimal, counting the whole record. */
        size_t len = 0, i = 0;
        for (; i < n && i < 8 && s[i] >= '0' && s[i] <= '9'; i++)
            len = len * 10 + (size_t)(s[i] - '0');
        if (i == 0 || i == n || s[i] != ' ' || len <= i + 1 || len > n || s[len - 1] != '\n')
            return TAR_EPAX;
        const char *k = s + i + 1, *end = s + len - 1;
        const char *eq = memchr(k, '=', (size_t)(end - k));
        if (!eq || eq == k)
            return TAR_EPAX;
        int rc = pax_apply(x, k, (size_t)(eq - k), eq + 1, (size_t)(end - eq - 1));
        if (rc != TAR_OK)
            return rc;
        s += len;
        n -= len;
    }
    return TAR_OK;
}

/* ---- encode ------------------------------------------------------------------------ */

/* Splits name into ustar's prefix (155) and name (100) at a '/'. */
static bool split_name(const char *name, size_t n, size_t *cut)
{
    if (n <= 100) {
        *cut = 0;
        return true;
    }
    /* The latest '/' that leaves at most 155 bytes before it and a
     * non-empty name of at most 100 after it. */
    size_t max = n - 1 < 155 ? n - 1 : 155;
    for (size_t i = max + 1; i-- > 0;)
        if (name[i] == '/' && i > 0 && n - i - 1 <= 100 && n - i - 1 > 0) {
            *cut = i;
            return true;
        }
    return false;
}

static void put_str(uint8_t *h, size_t off, size_t len, const char *s, size_t n)
{
    memcpy(h + off, s, n < len ? n : len);
}

static void put_num(uint8_t *h, size_t off, size_t len, int64_t v)
{
    tar_num_encode(h + off, len, v);
}

static void finish_header(uint8_t *h)
{
    memcpy(h + H_MAGIC, "ustar\0" "00", 8);
    put_num(h, H_DEVMAJOR, 0);
    put_num(h, H_DEVMINOR, 0);
    /* GNU's form: six digits, NUL, space. */
    snprintf((char *)h + H_CHKSUM_AT, 8, "%06o", tar_checksum(h) & 0777777);
    h[H_CHKSUM_AT + 7] = ' ';
}

int tar_encode(cbuf *out, const tar_entry *e)
{
    size_t nl = strnlen(e->name, TAR_NAME_MAX), ll = strnlen(e->linkname, TAR_NAME_MAX);
    if (nl == 0 || nl >= TAR_NAME_MAX || ll >= TAR_NAME_MAX || e->size > (uint64_t)INT64_MAX ||
        e->uid > (uint64_t)INT64_MAX || e->gid > (uint64_t)INT64_MAX)
        return -1;
    size_t cut;
    bool fits = split_name(e->name, nl, &cut);
    cbuf pax;
    cbuf_init(&pax);
    char num[32];
    if (!fits) {
        tar_pax_record(&pax, "path", e->name, nl);
        /* Raw bytes are legal in a name; pax says text is UTF-8 unless told. */
        if (!utf8_valid((const uint8_t *)e->name, nl))
            tar_pax_record(&pax, "hdrcharset", "BINARY", 6);
    }
    if (ll > 100)
        tar_pax_record(&pax, "linkpath", e->linkname, ll);
#define NUM_RECORD(key, fmt, v)                                                             \
    tar_pax_record(&pax, key, num, (size_t)snprintf(num, sizeof(num), fmt, v))
    if (e->size > (uint64_t)TAR_OCTAL11_MAX)
        NUM_RECORD("size", "%llu", (unsigned long long)e->size);
    if (e->mtime < 0 || e->mtime > TAR_OCTAL11_MAX)
        NUM_RECORD("mtime", "%lld", (long long)e->mtime);
    if (e->uid > (uint64_t)TAR_OCTAL7_MAX)
        NUM_RECORD("uid", "%llu", (unsigned long long)e->uid);
    if (e->gid > (uint64_t)TAR_OCTAL7_MAX)
        NUM_RECORD("gid", "%llu", (unsigned long long)e->gid);
#undef NUM_RECORD
    if (cbuf_avail(&pax)) {
        uint8_t *x = cbuf_reserve(out, TAR_BLOCK);
        memset(x, 0, TAR_BLOCK);
        /* "PaxHeaders/<base name>": what a reader without pax support
         * extracts, harmlessly, instead of applying it. */
        const char *base = e->name + nl;
        while (base > e->name && base[-1] == '/')
            base--;
        const char *b = base;
        while (b > e->name && b[-1] != '/')
            b--;
        snprintf((char *)x, 101, "PaxHeaders/%.*s", (int)(base - b), b);
        put_num(x, H_MODE, 0644);
        put_num(x, H_UID, 0);
        put_num(x, H_GID, 0);
        put_num(x, H_SIZE, (int64_t)cbuf_avail(&pax));
        put_num(x, H_MTIME, e->mtime < 0 || e->mtime > TAR_OCTAL11_MAX ? 0 : e->mtime);
        x[H_TYPE] = 'x';
        finish_header(x);
        cbuf_commit(out, TAR_BLOCK);
        size_t pn = cbuf_avail(&pax), padded = (pn + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
        uint8_t *d = cbuf_reserve(out, padded);
        memcpy(d, cbuf_head(&pax), pn);
        memset(d + pn, 0, padded - pn);
        cbuf_commit(out, padded);
    }
    cbuf_free(&pax);

    uint8_t *h = cbuf_reserve(out, TAR_BLOCK);
    memset(h, 0, TAR_BLOCK);
    if (fits && cut) {
        put_str(h, H_PREFIX, e->name, cut);
        put_str(h, H_NAME, e->name + cut + 1, nl - cut - 1);
    } else {
        /* Too long: the pax path is the name; this is for old readers. */
        put_str(h, H_NAME, e->name, nl);
    }
    put_num(h, H_MODE, e->mode & 07777);
    put_num(h, H_UID, (int64_t)e->uid);
    put_num(h, H_GID, (int64_t)e->gid);
    put_num(h, H_SIZE, (int64_t)e->size);
    put_num(h, H_MTIME, e->mtime);
    h[H_TYPE] = (uint8_t)(e->type ? e->type : '0');
    put_str(h, H_LINK, e->linkname, ll);
    finish_header(h);
    cbuf_commit(out, TAR_BLOCK);
    return 0;
}

/* ---- reading ------------------------------------------------------------------------ */

void tar_reader_init(tar_reader *r, tar_read_fn fn, void *ctx)
{
    /* The name buffers and the read buffer need no clearing. */
    memset(r, 0, offsetof(tar_reader, pax));
    r->pax.have = 0;
    r->read = fn;
    r->ctx = ctx;
}

/* Reads until at least need bytes are buffered. */
static int fill(tar_reader *r, size_t need)
{
    if (r->len - r->pos >= need)
        return TAR_OK;
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
    while (r->len < need) {
        if (r->eof)
            return TAR_ETRUNC;
        size_t room = sizeof(r->buf) - r->len;
        ssize_t k = r->read(r->ctx, r->buf + r->len, room);
        if (k < 0 || (size_t)k > room)
            return TAR_EREAD;
        if (k == 0)
            r->eof = true;
        r->len += (size_t)k;
    }
    return TAR_OK;
}

static int skip(tar_reader *r, uint64_t n)
{
    while (n) {
        int rc = fill(r, 1);
        if (rc != TAR_OK)
            return rc;
        size_t k = r->len - r->pos;
        if (k > n)
            k = (size_t)n;
        r->pos += k;
        n -= k;
    }
    return TAR_OK;
}

static int fail(tar_reader *r, int rc)
{
    r->state = rc;
    return rc;
}

ssize_t tar_read(tar_reader *r, void *buf, size_t n)
{
    if (r->state != TAR_OK)
        return r->state < 0 ? r->state : 0;
    if (n > r->remaining)
        n = (size_t)r->remaining;
    if (n > SSIZE_MAX)
        n = SSIZE_MAX;
    if (!n)
        return 0;
    size_t k = r->len - r->pos;
    if (!k && n >= sizeof(r->buf) / 2) {
        /* Large reads go straight to the caller: no copy through buf. */
        ssize_t got = r->read(r->ctx, buf, n);
        if (got < 0 || (size_t)got > n)
            return fail(r, TAR_EREAD);
        if (got == 0) {
            r->eof = true;
            return fail(r, TAR_ETRUNC);
        }
        k = (size_t)got;
    } else {
        int rc = fill(r, 1);
        if (rc != TAR_OK)
            return fail(r, rc);
        k = r->len - r->pos;
        if (k > n)
            k = n;
        memcpy(buf, r->buf + r->pos, k);
        r->pos += k;
    }
    r->remaining -= k;
    return (ssize_t)k;
}

static int read_all(tar_reader *r, void *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t k = tar_read(r, (char *)buf + got, n - got);
        if (k <= 0)
            return k < 0 ? (int)k : fail(r, TAR_ETRUNC);
        got += (size_t)k;
    }
    return TAR_OK;
}

static void begin_content(tar_reader *r, uint64_t size)
{
    r->remaining = size;
    r->pad = (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
}

static bool compressed_magic(const uint8_t *p, size_t n)
{
    return (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) ||                        /* gzip */
           (n >= 3 && !memcmp(p, "BZh", 3)) ||                                 /* bzip2 */
           (n >= 6 && !memcmp(p, "\xfd" "7zXZ\0", 6)) ||                       /* xz */
           (n >= 4 && !memcmp(p, "\x28\xb5\x2f\xfd", 4));                    /* zstd */
}

/* A GNU 'L' or 'K' member: the name, NUL-terminated, as its content. */
static int read_gnu_name(tar_reader *r, uint64_t size, char *dst, unsigned bit)
{
    if (size > TAR_NAME_MAX)
        return fail(r, TAR_ELONG);
    int rc = read_all(r, dst, (size_t)size);
    if (rc != TAR_OK)
        return rc;
    size_t n = strnlen(dst, (size_t)size);
    if (n >= TAR_NAME_MAX)
        return fail(r, TAR_ELONG);
    dst[n] = '\0';
    r->gnu = n ? r->gnu | bit : r->gnu & ~bit;
    return TAR_OK;
}

static int read_pax(tar_reader *r, uint64_t size)
{
    if (size > TAR_PAX_MAX)
        return fail(r, TAR_EPAX);
    uint8_t *p = cella_malloc(size ? (size_t)size : 1);
    int rc = read_all(r, p, (size_t)size);
    if (rc == TAR_OK && (rc = tar_pax_parse(p, (size_t)size, &r->pax)) != TAR_OK)
        fail(r, rc);
    cella_free(p);
    return rc;
}

/* The extended headers read since the last member, onto e. */
static void apply_pending(tar_reader *r, tar_entry *e)
{
    const tar_pax *x = &r->pax;
    if (x->have & TAR_PAX_PATH)
        strcpy(e->name, x->path);
    else if (r->gnu & TAR_PAX_PATH)
        strcpy(e->name, r->gnu_name);
    if (x->have & TAR_PAX_LINKPATH)
        strcpy(e->linkname, x->linkpath);
    else if (r->gnu & TAR_PAX_LINKPATH)
        strcpy(e->linkname, r->gnu_link);
    if (x->have & TAR_PAX_SIZE)
        e->size = x->size;
    if (x->have & TAR_PAX_MTIME)
        e->mtime = x->mtime;
    if (x->have & TAR_PAX_UID)
        e->uid = x->uid;
    if (x->have & TAR_PAX_GID)
        e->gid = x->gid;
    /* The content is a sparse map, not the file: the caller refuses 'S'. */
    if (x->have & TAR_PAX_SPARSE)
        e->type = 'S';
    r->pax.have = 0;
    r->gnu = 0;
}

int tar_next(tar_reader *r, tar_entry *e)
{
    for (;;) {
        if (r->state != TAR_OK)
            return r->state;
        int rc = skip(r, r->remaining);
        if (rc == TAR_OK)
            rc = skip(r, r->pad);
        r->remaining = r->pad = 0;
        if (rc == TAR_OK)
            rc = fill(r, TAR_BLOCK);
        bool first = r->headers++ == 0;
        if (rc == TAR_OK)
            rc = tar_header_decode(r->buf + r->pos, e);
        /* Only where the first header fails to decode: a tar member could
         * be named "BZh..." after all. */
        if (first && rc < 0 && compressed_magic(r->buf + r->pos, r->len - r->pos))
            rc = TAR_ECOMPRESSED;
        if (rc != TAR_OK)
            return fail(r, rc);
        r->pos += TAR_BLOCK;
        switch (e->type) {
        case 'x':
            begin_content(r, e->size);
            if (read_pax(r, e->size) != TAR_OK)
                return r->state;
            continue;
        case 'g':                 /* global defaults: nothing we apply */
            begin_content(r, e->size);
            continue;
        case 'L':
        case 'K':
            begin_content(r, e->size);
            if (read_gnu_name(r, e->size, e->type == 'L' ? r->gnu_name : r->gnu_link,
                              e->type == 'L' ? TAR_PAX_PATH : TAR_PAX_LINKPATH) != TAR_OK)
                return r->state;
            continue;
        default:
            break;
        }
        apply_pending(r, e);
        /* POSIX: links, devices, directories and FIFOs carry no content
         * whatever their size field says. */
        if (e->type && strchr("123456", e->type))
            e->size = 0;
        begin_content(r, e->size);
        return TAR_OK;
    }
}
