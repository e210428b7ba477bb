/* The pure parts of typed runs: value texts, the cache key, cache entries
 * and the auto-IO wrapper. No I/O here, so all of it is unit-tested, and
 * what reads untrusted bytes (program outputs, cache entries) is fuzzed. */
#include "core/typed.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/tar.h"
#include "util/text.h"

static const char *const type_names[] = {
    [TT_INT] = "int",           [TT_FLOAT] = "float",         [TT_STR] = "str",
    [TT_BOOL] = "bool",         [TT_DATETIME] = "datetime",   [TT_TIMEDELTA] = "timedelta",
    [TT_FILE] = "file",         [TT_DIR] = "dir",
};

const char *typed_type_name(typed_type t)
{
    return t >= TT_INT && t <= TT_LAST ? type_names[t] : NULL;
}

int typed_type_parse(const char *s, typed_type *out)
{
    for (int t = TT_INT; t <= TT_LAST; t++)
        if (!strcmp(s, type_names[t])) {
            *out = (typed_type)t;
            return 0;
        }
    return -1;
}

bool typed_name_ok(const char *s)
{
    size_t n = strlen(s);
    /* Joined to /var/inputs/ or /var/outputs/ as one component: neither a
     * slash nor a dot name can make it name another place. */
    return n > 0 && n <= TYPED_NAME_MAX && !strchr(s, '/') && strcmp(s, ".") != 0 &&
           strcmp(s, "..") != 0;
}

bool typed_name_is_var(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || isdigit((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isascii((unsigned char)s[i]) && (isalnum((unsigned char)s[i]) || s[i] == '_')))
            return false;
    return true;
}

/* ---- value texts ------------------------------------------------------------ */

static int why_set(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why_set(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

static bool is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The text without surrounding whitespace, as a C string in buf (at least
 * TYPED_SCALAR_MAX + 1 bytes). -1 when too long or holding a NUL. */
static int scalar_text(const uint8_t *p, size_t n, char *buf, char *why, size_t why_n)
{
    while (n && is_space(p[0]))
        p++, n--;
    while (n && is_space(p[n - 1]))
        n--;
    if (n > TYPED_SCALAR_MAX)
        return why_set(why, why_n, "longer than %u bytes", TYPED_SCALAR_MAX);
    if (memchr(p, '\0', n))
        return why_set(why, why_n, "holds a NUL byte");
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

/* digits -> value, refusing overflow past max. Advances *s. */
static int digits(const char **s, unsigned __int128 max, unsigned __int128 *out, int *count)
{
    unsigned __int128 v = 0;
    int k = 0;
    while (isdigit((unsigned char)**s)) {
        v = v * 10 + (unsigned)(**s - '0');
        if (v > max)
            return -1;
        (*s)++;
        k++;
    }
    *out = v;
    *count = k;
    return 0;
}

static int parse_int(const char *t, cbuf *out, char *why, size_t why_n)
{
    const char *s = t;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    unsigned __int128 v;
    int k;
    if (digits(&s, (unsigned __int128)INT64_MAX + 1, &v, &k) < 0 || (!neg && v > INT64_MAX))
        return why_set(why, why_n, "'%.40s' is outside the 64-bit integer range", t);
    if (k == 0 || *s)
        return why_set(why, why_n, "'%.40s' is not an integer", t);
    char buf[32];
    int64_t x = neg ? (int64_t)(-(__int128)v) : (int64_t)v;
    int m = snprintf(buf, sizeof(buf), "%lld", (long long)x);
    cbuf_append(out, buf, (size_t)m);
    return 0;
}

void typed_float_text(double v, char *buf, size_t n)
{
    /* The shortest text that reads back as the same double, as Python's
     * repr() picks; ".0" keeps a whole number readable as a float. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".eEn"))
        snprintf(buf + strlen(buf), n - strlen(buf), ".0");
}

static int parse_float(const char *t, cbuf *out, char *why, size_t why_n)
{
    /* Hexadecimal floats are C's, not Python's or JSON's. */
    if (!t[0] || strpbrk(t, "xX"))
        return why_set(why, why_n, "'%.40s' is not a number", t);
    char *end;
    double v = strtod(t, &end);
    if (*end)
        return why_set(why, why_n, "'%.40s' is not a number", t);
    if (!isfinite(v))
        return why_set(why, why_n, "'%.40s' is not a finite number", t);
    char buf[40];
    typed_float_text(v, buf, sizeof(buf));
    cbuf_append(out, buf, strlen(buf));
    return 0;
}

static int parse_bool(const char *t, cbuf *out)
{
    bool f = !strcasecmp(t, "false") || !strcmp(t, "0") || !t[0];
    cbuf_append(out, f ? "false" : "true", f ? 5 : 4);
    return 0;
}

/* ---- datetime -------------------------------------------------------------- */

static bool leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in(int y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : d[m - 1];
}

/* Exactly n digits. */
static int fixed(const char **s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*s)[i]))
            return -1;
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    *out = v;
    return 0;
}

static int parse_datetime(const char *t, cbuf *out, char *why, size_t why_n)
{
    const char *s = t;
    int y, mo, d, h = 0, mi = 0, sec = 0, us = 0;
    bool has_off = false;
    int off_sign = 1, oh = 0, om = 0, os = 0;
    if (fixed(&s, 4, &y) < 0 || *s++ != '-' || fixed(&s, 2, &mo) < 0 || *s++ != '-' ||
        fixed(&s, 2, &d) < 0)
        goto bad;
    if (*s == 'T' || *s == 't' || *s == ' ') {
        s++;
        if (fixed(&s, 2, &h) < 0 || *s++ != ':' || fixed(&s, 2, &mi) < 0)
            goto bad;
        if (*s == ':') {
            s++;
            if (fixed(&s, 2, &sec) < 0)
                goto bad;
            if (*s == '.' || *s == ',') {
                s++;
                int k = 0;
                while (isdigit((unsigned char)*s) && k < 9) {
                    if (k < 6)
                        us = us * 10 + (*s - '0');
                    s++, k++;
                }
                if (k == 0 || isdigit((unsigned char)*s))
                    goto bad;
                for (; k < 6; k++)
                    us *= 10;
            }
        }
        if (*s == 'Z' || *s == 'z') {
            has_off = true;
            s++;
        } else if (*s == '+' || *s == '-') {
            has_off = true;
            off_sign = *s++ == '-' ? -1 : 1;
            if (fixed(&s, 2, &oh) < 0)
                goto bad;
            if (*s == ':') {
                s++;
                if (fixed(&s, 2, &om) < 0)
                    goto bad;
                if (*s == ':') {
                    s++;
                    if (fixed(&s, 2, &os) < 0)
                        goto bad;
                }
            } else if (isdigit((unsigned char)*s) && fixed(&s, 2, &om) < 0) {
                goto bad;
            }
        }
    }
    if (*s)
        goto bad;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in(y, mo) || h > 23 || mi > 59 ||
        sec > 59 || oh > 23 || om > 59 || os > 59)
        return why_set(why, why_n, "'%.40s' is not a valid date and time", t);
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d", y, mo, d, h, mi, sec);
    if (us)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, ".%06d", us);
    if (has_off) {
        /* "-00:00" is "+00:00", as Python writes it. */
        bool zero = !oh && !om && !os;
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%c%02d:%02d",
                      off_sign < 0 && !zero ? '-' : '+', oh, om);
        if (os)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":%02d", os);
    }
    cbuf_append(out, buf, (size_t)n);
    return 0;
bad:
    return why_set(why, why_n, "'%.40s' is not an ISO 8601 date and time "
                               "(YYYY-MM-DDTHH:MM:SS[.ffffff][+HH:MM])", t);
}

/* ---- timedelta ------------------------------------------------------------- */

#define US_PER_S 1000000ll

/* "int[.frac]" times unit (µs), rounded half away from zero, into *acc. */
static int add_scaled(const char **s, __int128 unit, __int128 *acc, bool *any)
{
    unsigned __int128 whole, frac = 0;
    int k, fk = 0;
    if (digits(s, (unsigned __int128)1 << 64, &whole, &k) < 0)
        return -1;
    if (**s == '.' || **s == ',') {
        (*s)++;
        unsigned __int128 pow = 1;
        while (isdigit((unsigned char)**s)) {
            if (fk < 18) {
                frac = frac * 10 + (unsigned)(**s - '0');
                pow *= 10;
                fk++;
            }
            (*s)++;
        }
        if (fk == 0 && k == 0)
            return -1;
        frac = (frac * (unsigned __int128)unit * 2 + pow) / (pow * 2);
    } else if (k == 0) {
        return -1;
    }
    *acc += (__int128)whole * unit + (__int128)frac;
    *any = true;
    return *acc > ((__int128)1 << 64) ? -1 : 0;
}

static int td_iso(const char *s, __int128 *acc)
{
    /* P[nW][nD][T[nH][nM][nS]], upper or lower case. */
    if (toupper((unsigned char)*s++) != 'P')
        return -1;
    static const struct {
        char c;
        long long unit;
        bool time;
    } parts[] = {{'W', 7 * 86400 * US_PER_S, false}, {'D', 86400 * US_PER_S, false},
                 {'H', 3600 * US_PER_S, true},       {'M', 60 * US_PER_S, true},
                 {'S', US_PER_S, true}};
    bool in_time = false, any = false, any_time = false;
    size_t next = 0;
    while (*s) {
        if (toupper((unsigned char)*s) == 'T' && !in_time) {
            in_time = true;
            s++;
            continue;
        }
        const char *start = s;
        __int128 part = 0;
        bool got = false;
        /* The number's unit decides its scale: read it first. */
        const char *u = s;
        while (isdigit((unsigned char)*u) || *u == '.' || *u == ',')
            u++;
        char c = (char)toupper((unsigned char)*u);
        size_t i = next;
        while (i < 5 && !(parts[i].c == c && parts[i].time == in_time))
            i++;
        if (i == 5)
            return !in_time && (c == 'Y' || c == 'M') ? -2 : -1;
        s = start;
        if (add_scaled(&s, parts[i].unit, &part, &got) < 0 || s != u)
            return -1;
        *acc += part;
        s++;
        next = i + 1;
        any = true;
        any_time |= in_time;
        if (*acc > ((__int128)1 << 64))
            return -1;
    }
    return any && (!in_time || any_time) ? 0 : -1;
}

static int td_python(const char *s, __int128 *acc)
{
    /* [D day[s], ]H:MM:SS[.ffffff], as str(timedelta) writes it; the days
     * carry the sign ("-1 day, 23:59:59"). */
    __int128 days = 0;
    bool neg_days = false;
    const char *comma = strchr(s, ',');
    if (comma) {
        if (*s == '-' || *s == '+')
            neg_days = *s++ == '-';
        unsigned __int128 dv;
        int k;
        if (digits(&s, (unsigned __int128)1 << 40, &dv, &k) < 0 || !k)
            return -1;
        days = (__int128)dv;
        if (strncmp(s, " days, ", 7) == 0)
            s += 7;
        else if (strncmp(s, " day, ", 6) == 0)
            s += 6;
        else
            return -1;
    }
    unsigned __int128 h;
    int k, mi, sec;
    if (digits(&s, 1u << 30, &h, &k) < 0 || !k || *s++ != ':' || fixed(&s, 2, &mi) < 0 ||
        *s++ != ':' || fixed(&s, 2, &sec) < 0 || mi > 59 || sec > 59)
        return -1;
    __int128 t = ((__int128)h * 3600 + mi * 60 + sec) * US_PER_S;
    if (*s == '.') {
        s++;
        __int128 frac = 0;
        bool got = false;
        const char *f = s - 1;           /* add_scaled reads ".ffffff" */
        if (add_scaled(&f, US_PER_S, &frac, &got) < 0)
            return -1;
        s = f;
        t += frac;
    }
    if (*s)
        return -1;
    *acc = (neg_days ? -days : days) * 86400 * US_PER_S + t;
    return 0;
}

int typed_timedelta_us(const uint8_t *p, size_t n, int64_t *us)
{
    char t[TYPED_SCALAR_MAX + 1], why[8];
    if (scalar_text(p, n, t, why, sizeof(why)) < 0 || !t[0])
        return -1;
    const char *s = t;
    bool neg = false;
    __int128 acc = 0;
    int rc;
    if (strchr(t, ':')) {
        rc = td_python(t, &acc);
    } else {
        if (*s == '-' || *s == '+')
            neg = *s++ == '-';
        if (toupper((unsigned char)*s) == 'P') {
            rc = td_iso(s, &acc);
        } else if (strpbrk(s, "eE")) {
            /* Seconds with an exponent: through a double (exact enough). */
            char *end;
            double v = strtod(s, &end);
            rc = *end || !isfinite(v) || !isdigit((unsigned char)*s) || fabs(v) > 9.2e12 ? -1 : 0;
            acc = rc ? 0 : (__int128)llround(v * 1e6);
            if (acc < 0)
                acc = -acc, neg = !neg;
        } else {
            bool any = false;
            rc = add_scaled(&s, US_PER_S, &acc, &any) < 0 || *s ? -1 : 0;
        }
    }
    if (rc < 0)
        return rc;
    if (neg)
        acc = -acc;
    if (acc > INT64_MAX || acc < -(__int128)INT64_MAX)
        return -1;
    *us = (int64_t)acc;
    return 0;
}

void typed_timedelta_text(int64_t us, char *buf, size_t n)
{
    unsigned long long a = us < 0 ? (unsigned long long)(-(us + 1)) + 1 : (unsigned long long)us;
    int m = snprintf(buf, n, "%s%llu", us < 0 ? "-" : "", a / US_PER_S);
    unsigned long long f = a % US_PER_S;
    if (f && m > 0 && (size_t)m < n) {
        char frac[8];
        snprintf(frac, sizeof(frac), "%06llu", f);
        for (int i = 5; i > 0 && frac[i] == '0'; i--)
            frac[i] = '\0';
        snprintf(buf + m, n - (size_t)m, ".%s", frac);
    }
}

static int parse_timedelta(const uint8_t *p, size_t n, cbuf *out, char *why, size_t why_n)
{
    int64_t us;
    int rc = typed_timedelta_us(p, n, &us);
    if (rc < 0) {
        char t[48];
        size_t k = n < 40 ? n : 40;
        memcpy(t, p, k);
        t[k] = '\0';
        for (size_t i = 0; i < k; i++)
            if (!isprint((unsigned char)t[i]))
                t[i] = '?';
        if (rc == -2)
            return why_set(why, why_n, "'%s': years and months have no fixed length; use "
                                       "weeks, days, hours, minutes and seconds", t);
        return why_set(why, why_n, "'%s' is not a duration (seconds, an ISO 8601 duration "
                                   "such as P1DT2H, or H:MM:SS)", t);
    }
    char buf[48];
    typed_timedelta_text(us, buf, sizeof(buf));
    cbuf_append(out, buf, strlen(buf));
    return 0;
}

typedef struct mem_src {
    const uint8_t *p;
    size_t n, off;
} mem_src;

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
    mem_src *m = ctx;
    size_t k = m->n - m->off < n ? m->n - m->off : n;
    memcpy(buf, m->p + m->off, k);
    m->off += k;
    return (ssize_t)k;
}

/* A dir's archive, walked header by header (it is in memory already): a
 * malformed one is the caller's mistake, said now, before a sandbox is
 * made for it. What its entries may do (names that climb out, devices) is
 * for the extraction inside the sandbox to refuse. */
static int check_archive(const uint8_t *p, size_t n, char *why, size_t why_n)
{
    if (!n)
        return 0;                 /* no archive: an empty directory */
    mem_src m = {p, n, 0};
    tar_reader *r = cella_malloc(sizeof(*r));
    tar_entry *te = cella_malloc(sizeof(*te));
    tar_reader_init(r, mem_read, &m);
    int st;
    while ((st = tar_next(r, te)) == TAR_OK)
        ;
    cella_free(te);
    cella_free(r);
    if (st != TAR_END)
        return why_set(why, why_n, "not a usable tar archive: %s", tar_strerror(st));
    return 0;
}

int typed_parse(typed_type t, const uint8_t *p, size_t n, cbuf *out, char *why, size_t why_n)
{
    char s[TYPED_SCALAR_MAX + 1];
    switch (t) {
    case TT_STR:
        if (!utf8_valid(p, n))
            return why_set(why, why_n, "not valid UTF-8 text (declare it as a file)");
        cbuf_append(out, p, n);
        return 0;
    case TT_DIR:
        if (check_archive(p, n, why, why_n) < 0)
            return -1;
        cbuf_append(out, p, n);
        return 0;
    case TT_FILE:
        cbuf_append(out, p, n);
        return 0;
    case TT_TIMEDELTA:
        return parse_timedelta(p, n, out, why, why_n);
    case TT_INT:
    case TT_FLOAT:
    case TT_BOOL:
    case TT_DATETIME:
        break;
    default:
        return why_set(why, why_n, "unknown type");
    }
    if (!utf8_valid(p, n))
        return why_set(why, why_n, "not text");
    if (scalar_text(p, n, s, why, why_n) < 0)
        return -1;
    switch (t) {
    case TT_INT:
        return parse_int(s, out, why, why_n);
    case TT_FLOAT:
        return parse_float(s, out, why, why_n);
    case TT_BOOL:
        return parse_bool(s, out);
    default:
        return parse_datetime(s, out, why, why_n);
    }
}

/* ---- the cache key ----------------------------------------------------------- */

/* Every piece is length-prefixed (or counted), so no two requests encode
 * alike. */
static void h_bytes(EVP_MD_CTX *h, const void *p, size_t n)
{
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
    EVP_DigestUpdate(h, len, sizeof(len));
    if (n)
        EVP_DigestUpdate(h, p, n);
}

static void h_str(EVP_MD_CTX *h, const char *s)
{
    /* NULL and "" differ: a presence byte first. */
    uint8_t present = s != NULL;
    EVP_DigestUpdate(h, &present, 1);
    if (s)
        h_bytes(h, s, strlen(s));
}

static void h_u32(EVP_MD_CTX *h, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    EVP_DigestUpdate(h, b, 4);
}

static void h_strv(EVP_MD_CTX *h, char *const *v)
{
    size_t n = v ? cella_strv_len(v) : 0;
    h_u32(h, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        h_bytes(h, v[i], strlen(v[i]));
}

static int by_name(const void *a, const void *b)
{
    return strcmp(**(const char *const *const *)a, **(const char *const *const *)b);
}

/* Indexes of items (each starting with its name pointer) sorted by name. */
static size_t *sorted(const void *items, size_t n, size_t size)
{
    const char ***v = cella_calloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = (const char **)((const char *)items + i * size);
    qsort(v, n, sizeof(*v), by_name);
    size_t *idx = cella_calloc(n + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        idx[i] = (size_t)((const char *)v[i] - (const char *)items) / size;
    cella_free(v);
    return idx;
}

void typed_cache_key(const char *tenant, const core_typed_req *r, const char *interp,
                     uint8_t key[32])
{
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    if (!h)
        abort();                  /* out of memory, as cella_malloc would */
    EVP_DigestInit_ex(h, EVP_sha256(), NULL);
    h_str(h, "cella typed run 1");
    h_str(h, tenant);
    h_str(h, r->run.image);
    h_u32(h, (uint32_t)r->mode);
    h_str(h, r->mode == TM_COMMAND ? NULL : interp);
    uint8_t has_code = r->mode != TM_COMMAND && r->run.code;
    EVP_DigestUpdate(h, &has_code, 1);
    if (has_code)
        h_bytes(h, r->run.code, r->run.code_len);
    h_strv(h, r->mode == TM_COMMAND ? r->argv : NULL);
    h_u32(h, (uint32_t)r->run.n_files);
    for (size_t i = 0; i < r->run.n_files; i++) {
        h_bytes(h, r->run.files[i].path, strlen(r->run.files[i].path));
        h_bytes(h, r->run.files[i].content, r->run.files[i].len);
    }
    h_strv(h, r->run.env);
    uint8_t has_stdin = r->run.has_stdin;
    EVP_DigestUpdate(h, &has_stdin, 1);
    if (has_stdin)
        h_bytes(h, r->run.stdin_data, r->run.stdin_len);
    /* Inputs and outputs are sets: their order in the request is not part
     * of what the run computes. */
    size_t *idx = sorted(r->inputs, r->n_inputs, sizeof(*r->inputs));
    h_u32(h, (uint32_t)r->n_inputs);
    for (size_t i = 0; i < r->n_inputs; i++) {
        const typed_value *v = &r->inputs[idx[i]];
        h_bytes(h, v->name, strlen(v->name));
        h_u32(h, (uint32_t)v->type);
        h_bytes(h, v->data, v->len);
    }
    cella_free(idx);
    idx = sorted(r->outputs, r->n_outputs, sizeof(*r->outputs));
    h_u32(h, (uint32_t)r->n_outputs);
    for (size_t i = 0; i < r->n_outputs; i++) {
        const typed_decl *d = &r->outputs[idx[i]];
        h_bytes(h, d->name, strlen(d->name));
        h_u32(h, (uint32_t)d->type);
    }
    cella_free(idx);
    unsigned int len = 32;
    EVP_DigestFinal_ex(h, key, &len);
    EVP_MD_CTX_free(h);
}

/* ---- cache entries ------------------------------------------------------------ */

/* "CTR1", u32 flags, i32 exit_code, i32 signal, u64 duration_ms,
 * u64 timeout_ms, blob stdout, blob stderr, u32 n, n x (u8 type, blob
 * name, blob data); integers big-endian, blobs u32-length-prefixed. */
#define ENTRY_MAGIC "CTR1"
enum { EF_EXIT = 1, EF_TIMED_OUT = 2, EF_OUT_TRUNC = 4, EF_ERR_TRUNC = 8, EF_OOM = 16 };

static void put_u32(cbuf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    cbuf_append(b, x, 4);
}

static void put_u64(cbuf *b, uint64_t v)
{
    put_u32(b, (uint32_t)(v >> 32));
    put_u32(b, (uint32_t)v);
}

static void put_blob(cbuf *b, const void *p, size_t n)
{
    put_u32(b, (uint32_t)n);
    cbuf_append(b, p, n);
}

void typed_result_encode(const core_typed_result *r, cbuf *out)
{
    const core_exec_result *x = &r->exec;
    cbuf_append(out, ENTRY_MAGIC, 4);
    put_u32(out, (x->has_exit_code ? EF_EXIT : 0) | (x->timed_out ? EF_TIMED_OUT : 0) |
                     (x->stdout_truncated ? EF_OUT_TRUNC : 0) |
                     (x->stderr_truncated ? EF_ERR_TRUNC : 0) | (x->oom_killed ? EF_OOM : 0));
    put_u32(out, (uint32_t)x->exit_code);
    put_u32(out, (uint32_t)x->signal);
    put_u64(out, x->duration_ms);
    put_u64(out, x->timeout_ms);
    put_blob(out, cbuf_head(&x->out[1]), cbuf_avail(&x->out[1]));
    put_blob(out, cbuf_head(&x->out[2]), cbuf_avail(&x->out[2]));
    put_u32(out, (uint32_t)r->n_outputs);
    for (size_t i = 0; i < r->n_outputs; i++) {
        const typed_out *o = &r->outputs[i];
        uint8_t t = (uint8_t)o->type;
        cbuf_append(out, &t, 1);
        put_blob(out, o->name, strlen(o->name));
        put_blob(out, cbuf_head(&o->data), cbuf_avail(&o->data));
    }
}

typedef struct reader {
    const uint8_t *p;
    size_t n;
    bool bad;
} reader;

static const uint8_t *take_n(reader *rd, size_t k)
{
    if (rd->bad || rd->n < k) {
        rd->bad = true;
        return NULL;
    }
    const uint8_t *p = rd->p;
    rd->p += k;
    rd->n -= k;
    return p;
}

static uint32_t get_u32(reader *rd)
{
    const uint8_t *p = take_n(rd, 4);
    return p ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] : 0;
}

static uint64_t get_u64(reader *rd)
{
    uint64_t hi = get_u32(rd);
    return hi << 32 | get_u32(rd);
}

static const uint8_t *get_blob(reader *rd, size_t *n, size_t max)
{
    *n = get_u32(rd);
    if (*n > max)
        rd->bad = true;
    return take_n(rd, rd->bad ? SIZE_MAX : *n);
}

int typed_result_decode(const uint8_t *p, size_t n, core_typed_result *r)
{
    core_typed_result_init(r);
    reader rd = {p, n, false};
    const uint8_t *magic = take_n(&rd, 4);
    if (!magic || memcmp(magic, ENTRY_MAGIC, 4) != 0)
        return -1;
    core_exec_result *x = &r->exec;
    uint32_t fl = get_u32(&rd);
    x->has_exit_code = fl & EF_EXIT;
    x->timed_out = fl & EF_TIMED_OUT;
    x->stdout_truncated = fl & EF_OUT_TRUNC;
    x->stderr_truncated = fl & EF_ERR_TRUNC;
    x->oom_killed = fl & EF_OOM;
    x->exit_code = (int32_t)get_u32(&rd);
    x->signal = (int32_t)get_u32(&rd);
    x->duration_ms = get_u64(&rd);
    x->timeout_ms = get_u64(&rd);
    for (int i = 1; i < 3 && !rd.bad; i++) {
        size_t len;
        const uint8_t *b = get_blob(&rd, &len, SIZE_MAX);
        if (b)
            cbuf_append(&x->out[i], b, len);
    }
    uint32_t count = get_u32(&rd);
    if (rd.bad || count > TYPED_MAX_VARS || (fl & ~31u))
        goto bad;
    r->outputs = cella_calloc(count + 1, sizeof(*r->outputs));
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *t = take_n(&rd, 1);
        size_t nl, dl;
        const uint8_t *name = get_blob(&rd, &nl, TYPED_NAME_MAX);
        const uint8_t *data = get_blob(&rd, &dl, TYPED_OUTPUT_MAX);
        if (rd.bad || !typed_type_name((typed_type)*t))
            goto bad;
        typed_out *o = &r->outputs[r->n_outputs];
        o->name = cella_strndup((const char *)name, nl);
        o->type = (typed_type)*t;
        cbuf_init(&o->data);
        r->n_outputs++;
        char why[160];
        /* The value is parsed again: what the API renders is always one. */
        if (strlen(o->name) != nl || !typed_name_ok(o->name) ||
            typed_parse(o->type, data, dl, &o->data, why, sizeof(why)) < 0)
            goto bad;
    }
    if (rd.n != 0)
        goto bad;
    return 0;
bad:
    core_typed_result_free(r);
    core_typed_result_init(r);
    return -1;
}

void core_typed_result_init(core_typed_result *r)
{
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < 3; i++)
        cbuf_init(&r->exec.out[i]);
}

void core_typed_result_free(core_typed_result *r)
{
    core_exec_result_free(&r->exec);
    for (size_t i = 0; i < r->n_outputs; i++) {
        cella_free(r->outputs[i].name);
        cbuf_free(&r->outputs[i].data);
    }
    cella_free(r->outputs);
    r->outputs = NULL;
    r->n_outputs = 0;
}

bool core_typed_success(const core_typed_result *r)
{
    return r->exec.has_exit_code && r->exec.exit_code == 0 && !r->exec.timed_out &&
           !r->has_outputs_error;
}

/* ---- the auto-IO wrapper -------------------------------------------------------- */

static const char wrapper_body[] =
    "def _read(name, kind):\n"
    "    path = '/var/inputs/' + name\n"
    "    if kind in ('file', 'dir'):\n"
    "        return path\n"
    "    with open(path, encoding='utf-8', newline='') as f:\n"
    "        text = f.read()\n"
    "    if kind == 'int':\n"
    "        return int(text)\n"
    "    if kind == 'float':\n"
    "        return float(text)\n"
    "    if kind == 'bool':\n"
    "        return text == 'true'\n"
    "    if kind == 'datetime':\n"
    "        return _dt.datetime.fromisoformat(text)\n"
    "    if kind == 'timedelta':\n"
    "        whole, _, frac = text.lstrip('-').partition('.')\n"
    "        us = int(whole) * 1000000 + int((frac + '000000')[:6])\n"
    "        return _dt.timedelta(microseconds=-us if text.startswith('-') else us)\n"
    "    return text\n"
    "\n"
    "def _text(value, kind):\n"
    "    if kind == 'datetime' and isinstance(value, _dt.date):\n"
    "        return value.isoformat()\n"
    "    if kind == 'timedelta' and isinstance(value, _dt.timedelta):\n"
    "        us = value // _dt.timedelta(microseconds=1)\n"
    "        s, f = divmod(abs(us), 1000000)\n"
    "        return ('-' if us < 0 else '') + str(s) + ('.%06d' % f if f else '')\n"
    "    return str(value)\n"
    "\n"
    "_g = {'__name__': '__main__', '__file__': _CODE, '__builtins__': __builtins__}\n"
    "for _n, _k, _v in _IN:\n"
    "    if _v:\n"
    "        _g[_n] = _read(_n, _k)\n"
    "_sys.argv = [_CODE]\n"
    "with open(_CODE, 'rb') as _f:\n"
    "    _src = _f.read()\n"
    "try:\n"
    "    exec(compile(_src, _CODE, 'exec'), _g)\n"
    "except SystemExit as _e:\n"
    "    # sys.exit(0) ends the code, not the run: its outputs are still written.\n"
    "    if _e.code not in (None, 0):\n"
    "        raise\n"
    "for _n, _k, _v in _OUT:\n"
    "    if _v and _k not in ('file', 'dir') and _n in _g:\n"
    "        with open('/var/outputs/' + _n, 'w', encoding='utf-8', newline='') as _f:\n"
    "            _f.write(_text(_g[_n], _k))\n";

static bool safe_byte(unsigned char c)
{
    return isascii(c) && (isalnum(c) || c == '_' || c == '.' || c == '-');
}

static void decl_list(cbuf *out, const char *var, const void *items, size_t n, size_t size,
                      size_t type_off)
{
    cbuf_append(out, var, strlen(var));
    cbuf_append(out, " = [", 4);
    for (size_t i = 0; i < n; i++) {
        const char *item = (const char *)items + i * size;
        const char *name = *(const char *const *)item;
        typed_type t = *(const typed_type *)(item + type_off);
        /* A name may hold any byte but '/' and NUL. One of [A-Za-z0-9_.-]
         * only goes in as it is; any other, as a bytes literal with every
         * other byte escaped, decoded back to the text it was. */
        bool plain = true;
        for (const unsigned char *p = (const unsigned char *)name; *p; p++)
            plain = plain && safe_byte(*p);
        cbuf_append(out, plain ? "('" : "(b'", plain ? 2 : 3);
        for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
            char b[8];
            int k = safe_byte(*p) ? snprintf(b, sizeof(b), "%c", *p)
                                  : snprintf(b, sizeof(b), "\\x%02x", *p);
            cbuf_append(out, b, (size_t)k);
        }
        char *s = cella_asprintf("'%s, '%s', %s), ",
                                 plain ? "" : ".decode('utf-8', 'surrogateescape')",
                                 typed_type_name(t), typed_name_is_var(name) ? "True" : "False");
        cbuf_append(out, s, strlen(s));
        cella_free(s);
    }
    cbuf_append(out, "]\n", 2);
}

void typed_wrapper(const core_typed_req *r, const char *code_path, cbuf *out)
{
    static const char head[] =
        "# cella's auto-IO wrapper for a typed run (docs/api.md): the declared inputs\n"
        "# from /var/inputs as variables, the code run with them, and the declared\n"
        "# outputs it set written to /var/outputs.\n"
        "import datetime as _dt, sys as _sys\n";
    cbuf_append(out, head, sizeof(head) - 1);
    decl_list(out, "_IN", r->inputs, r->n_inputs, sizeof(*r->inputs),
              offsetof(typed_value, type));
    decl_list(out, "_OUT", r->outputs, r->n_outputs, sizeof(*r->outputs),
              offsetof(typed_decl, type));
    char *c = cella_asprintf("_CODE = '%s'\n\n", code_path);
    cbuf_append(out, c, strlen(c));
    cella_free(c);
    cbuf_append(out, wrapper_body, sizeof(wrapper_body) - 1);
}
