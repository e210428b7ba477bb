#include "core/code_wire.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/fdio.h"

enum {
    T_HANDLE = 1, T_CODE, T_INPUT_NAME, T_INPUT_JSON, T_FUNCTION, T_HAS_FUNCTIONS,
    T_LIM_TIME, T_LIM_BYTES, T_LIM_ALLOCS, T_LIM_DEPTH, T_LIM_CALLS, T_LIM_NESTING,
    T_TLA, T_OUT_MAX,
    T_RES_ID, T_RES_VALUE, T_RES_EXC_TYPE, T_RES_EXC_MSG,
    T_BYTES, T_KIND, T_DONE, T_RESULT,
    T_CALL_ID, T_CALL_FN, T_CALL_ARGS, T_CALL_KWARGS,
    T_PENDING, T_OUT, T_OUT_TRUNC, T_DURATION, T_ERR_TYPE, T_ERR_MSG, T_ERR_LINE,
};

/* ---- encoding ------------------------------------------------------------- */

typedef struct enc {
    cbuf *b;
    size_t start;                 /* where this frame's length prefix is */
    bool over;
} enc;

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void field(enc *e, uint8_t tag, const void *p, size_t n, bool nul)
{
    size_t len = n + (nul ? 1 : 0);
    if (e->over || e->b->len - e->start + 5 + len > (size_t)CODE_WIRE_MAX_FRAME + 4) {
        e->over = true;
        return;
    }
    uint8_t h[5];
    h[0] = tag;
    put_u32(h + 1, (uint32_t)len);
    cbuf_append(e->b, h, 5);
    if (n)
        cbuf_append(e->b, p, n);
    if (nul)
        cbuf_append(e->b, "", 1);
}

static void f_u64(enc *e, uint8_t tag, uint64_t v)
{
    uint8_t p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    field(e, tag, p, 8, false);
}

static void f_str(enc *e, uint8_t tag, const char *s, size_t n)
{
    field(e, tag, s ? s : "", s ? n : 0, true);
}

static void f_cstr(enc *e, uint8_t tag, const char *s)
{
    if (s)
        f_str(e, tag, s, strlen(s));
}

static void f_wstr(enc *e, uint8_t tag, code_wire_str s)
{
    if (s.p)
        f_str(e, tag, s.p, s.n);
}

/* A run's limits (RUN; LOAD, where they cap the dump's). */
static void f_limits(enc *e, const code_limits *l)
{
    f_u64(e, T_LIM_TIME, l->max_time_us);
    f_u64(e, T_LIM_BYTES, l->max_bytes);
    f_u64(e, T_LIM_ALLOCS, l->max_allocs);
    f_u64(e, T_LIM_DEPTH, l->max_depth);
    f_u64(e, T_LIM_CALLS, l->max_calls);
    f_u64(e, T_LIM_NESTING, l->max_nesting);
}

int code_wire_encode(const code_wire_msg *m, cbuf *out)
{
    enc e = {.b = out, .start = out->len};
    uint8_t hdr[5] = {0};
    hdr[4] = (uint8_t)m->type;
    cbuf_append(out, hdr, 5);
    f_u64(&e, T_HANDLE, m->handle);
    if (m->type >= CW_RUN && m->type <= CW_FREE)
        f_u64(&e, T_OUT_MAX, m->out_max);
    switch (m->type) {
    case CW_RUN:
        f_wstr(&e, T_CODE, m->code);
        for (size_t i = 0; i < m->ninputs; i++) {
            f_cstr(&e, T_INPUT_NAME, m->inputs[i].name);
            f_cstr(&e, T_INPUT_JSON, m->inputs[i].json);
        }
        f_u64(&e, T_HAS_FUNCTIONS, m->has_functions);
        for (size_t i = 0; i < m->nfunctions; i++)
            f_cstr(&e, T_FUNCTION, m->functions[i]);
        f_limits(&e, &m->limits);
        f_u64(&e, T_TLA, m->top_level_await);
        break;
    case CW_RESUME:
        for (size_t i = 0; i < m->nresults; i++) {
            f_u64(&e, T_RES_ID, m->results[i].call_id);
            if (m->results[i].value_json)
                f_cstr(&e, T_RES_VALUE, m->results[i].value_json);
            else {
                f_cstr(&e, T_RES_EXC_TYPE, m->results[i].exc_type);
                f_cstr(&e, T_RES_EXC_MSG,
                       m->results[i].exc_message ? m->results[i].exc_message : "");
            }
        }
        break;
    case CW_LOAD:
        f_wstr(&e, T_BYTES, m->bytes);
        f_limits(&e, &m->limits);
        break;
    case CW_DUMPED:
        f_wstr(&e, T_BYTES, m->bytes);
        break;
    case CW_STEP:
        f_u64(&e, T_KIND, (uint64_t)m->kind);
        f_u64(&e, T_DONE, m->done);
        f_wstr(&e, T_RESULT, m->result_json);
        for (size_t i = 0; i < m->ncalls; i++) {
            f_u64(&e, T_CALL_ID, m->calls[i].id);
            f_wstr(&e, T_CALL_FN, m->calls[i].function);
            f_wstr(&e, T_CALL_ARGS, m->calls[i].args_json);
            f_wstr(&e, T_CALL_KWARGS, m->calls[i].kwargs_json);
        }
        for (size_t i = 0; i < m->npending; i++)
            f_u64(&e, T_PENDING, m->pending[i]);
        f_wstr(&e, T_OUT, m->out);
        f_u64(&e, T_OUT_TRUNC, m->out_truncated);
        f_u64(&e, T_DURATION, m->duration_us);
        /* an ERROR step carries the error fields */
        __attribute__((fallthrough));
    case CW_FAIL:
        f_wstr(&e, T_ERR_TYPE, m->err_type);
        f_wstr(&e, T_ERR_MSG, m->err_msg);
        f_u64(&e, T_ERR_LINE, (uint64_t)m->err_line);
        break;
    default:
        break;
    }
    if (e.over) {
        out->len = e.start;
        return -1;
    }
    put_u32(out->data + e.start, (uint32_t)(out->len - e.start - 4));
    return 0;
}

/* ---- decoding ------------------------------------------------------------- */

/* Grows an array by one zeroed element (capacities 1, 2, 4, ...); NULL past
 * the item cap. */
static void *grow(void *arr, size_t *n, size_t size)
{
    if (*n >= CODE_WIRE_MAX_ITEMS)
        return NULL;
    if ((*n & (*n - 1)) == 0)
        arr = cella_realloc(arr, (*n ? *n * 2 : 1) * size);
    memset((char *)arr + *n * size, 0, size);
    (*n)++;
    return arr;
}

static int get_str(const uint8_t *p, size_t len, code_wire_str *s)
{
    if (len == 0 || p[len - 1] != '\0')
        return -1;
    s->p = (const char *)p;
    s->n = len - 1;
    return 0;
}

/* A text that crosses into C strings (names, JSON): no NUL inside. */
static int get_text(const uint8_t *p, size_t len, const char **out)
{
    code_wire_str s;
    if (get_str(p, len, &s) < 0 || memchr(s.p, '\0', s.n))
        return -1;
    *out = s.p;
    return 0;
}

static int get_u64(const uint8_t *p, size_t len, uint64_t *v)
{
    if (len != 8)
        return -1;
    *v = 0;
    for (int i = 0; i < 8; i++)
        *v |= (uint64_t)p[i] << (8 * i);
    return 0;
}

static bool known_type(unsigned t)
{
    return (t >= CW_RUN && t <= CW_FREE) || (t >= CW_READY && t <= CW_FAIL);
}

static int one_field(code_wire_msg *m, unsigned tag, const uint8_t *p, size_t len,
                     const char **err)
{
    uint64_t v = 0;
    bool num = tag == T_HANDLE || tag == T_HAS_FUNCTIONS || (tag >= T_LIM_TIME && tag <= T_OUT_MAX) ||
               tag == T_RES_ID || tag == T_KIND || tag == T_DONE || tag == T_CALL_ID ||
               tag == T_PENDING || tag == T_OUT_TRUNC || tag == T_DURATION || tag == T_ERR_LINE;
    if (num && get_u64(p, len, &v) < 0)
        return *err = "a number field is not 8 bytes", -1;
    switch (tag) {
    case T_HANDLE:
        if (v > UINT32_MAX)
            return *err = "handle out of range", -1;
        m->handle = (uint32_t)v;
        return 0;
    case T_CODE:
        return get_str(p, len, &m->code) < 0 ? (*err = "bad code field", -1) : 0;
    case T_INPUT_NAME: {
        code_input *in = grow(m->inputs, &m->ninputs, sizeof(*in));
        if (!in)
            return *err = "too many inputs", -1;
        m->inputs = in;
        return get_text(p, len, &m->inputs[m->ninputs - 1].name) < 0 ? (*err = "bad input name", -1)
                                                                     : 0;
    }
    case T_INPUT_JSON:
        if (!m->ninputs || m->inputs[m->ninputs - 1].json)
            return *err = "input value without a name", -1;
        return get_text(p, len, &m->inputs[m->ninputs - 1].json) < 0 ? (*err = "bad input value", -1)
                                                                     : 0;
    case T_FUNCTION: {
        const char **f = grow(m->functions, &m->nfunctions, sizeof(*f));
        if (!f)
            return *err = "too many functions", -1;
        m->functions = f;
        return get_text(p, len, &m->functions[m->nfunctions - 1]) < 0
                   ? (*err = "bad function name", -1) : 0;
    }
    case T_HAS_FUNCTIONS: m->has_functions = v != 0; return 0;
    case T_LIM_TIME: m->limits.max_time_us = v; return 0;
    case T_LIM_BYTES: m->limits.max_bytes = (size_t)v; return 0;
    case T_LIM_ALLOCS: m->limits.max_allocs = (size_t)v; return 0;
    case T_LIM_DEPTH: m->limits.max_depth = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; return 0;
    case T_LIM_CALLS: m->limits.max_calls = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; return 0;
    case T_LIM_NESTING: m->limits.max_nesting = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; return 0;
    case T_TLA: m->top_level_await = v != 0; return 0;
    case T_OUT_MAX: m->out_max = v; return 0;
    case T_RES_ID: {
        code_result *r = grow(m->results, &m->nresults, sizeof(*r));
        if (!r)
            return *err = "too many results", -1;
        m->results = r;
        m->results[m->nresults - 1].call_id = v;
        return 0;
    }
    case T_RES_VALUE:
    case T_RES_EXC_TYPE:
    case T_RES_EXC_MSG: {
        if (!m->nresults)
            return *err = "a result field before its call id", -1;
        code_result *r = &m->results[m->nresults - 1];
        const char **slot = tag == T_RES_VALUE      ? &r->value_json
                            : tag == T_RES_EXC_TYPE ? &r->exc_type
                                                    : &r->exc_message;
        if (*slot)
            return *err = "a result field repeated", -1;
        return get_text(p, len, slot) < 0 ? (*err = "bad result text", -1) : 0;
    }
    case T_BYTES:
        return get_str(p, len, &m->bytes) < 0 ? (*err = "bad bytes field", -1) : 0;
    case T_KIND:
        if (v > CODE_STEP_ERROR)
            return *err = "unknown step kind", -1;
        m->kind = (code_step_kind)v;
        return 0;
    case T_DONE: m->done = v != 0; return 0;
    case T_RESULT:
        return get_str(p, len, &m->result_json) < 0 ? (*err = "bad result field", -1) : 0;
    case T_CALL_ID: {
        code_wire_call *c = grow(m->calls, &m->ncalls, sizeof(*c));
        if (!c)
            return *err = "too many calls", -1;
        m->calls = c;
        m->calls[m->ncalls - 1].id = v;
        return 0;
    }
    case T_CALL_FN:
    case T_CALL_ARGS:
    case T_CALL_KWARGS: {
        if (!m->ncalls)
            return *err = "a call field before its call id", -1;
        code_wire_call *c = &m->calls[m->ncalls - 1];
        code_wire_str *s = tag == T_CALL_FN ? &c->function : tag == T_CALL_ARGS ? &c->args_json
                                                                               : &c->kwargs_json;
        if (s->p)
            return *err = "a call field repeated", -1;
        return get_str(p, len, s) < 0 ? (*err = "bad call field", -1) : 0;
    }
    case T_PENDING: {
        uint64_t *pv = grow(m->pending, &m->npending, sizeof(*pv));
        if (!pv)
            return *err = "too many pending ids", -1;
        m->pending = pv;
        m->pending[m->npending - 1] = v;
        return 0;
    }
    case T_OUT:
        return get_str(p, len, &m->out) < 0 ? (*err = "bad output field", -1) : 0;
    case T_OUT_TRUNC: m->out_truncated = v != 0; return 0;
    case T_DURATION: m->duration_us = v; return 0;
    case T_ERR_TYPE:
        return get_str(p, len, &m->err_type) < 0 ? (*err = "bad error type", -1) : 0;
    case T_ERR_MSG:
        return get_str(p, len, &m->err_msg) < 0 ? (*err = "bad error message", -1) : 0;
    case T_ERR_LINE: m->err_line = (int64_t)v; return 0;
    default:
        return *err = "unknown field", -1;
    }
}

/* Every grouped item complete. */
static int check(const code_wire_msg *m, const char **err)
{
    for (size_t i = 0; i < m->ninputs; i++)
        if (!m->inputs[i].json)
            return *err = "an input without a value", -1;
    for (size_t i = 0; i < m->nresults; i++) {
        const code_result *r = &m->results[i];
        if (!r->value_json == !r->exc_type || (r->value_json && r->exc_message))
            return *err = "a result needs a value or an exception", -1;
    }
    for (size_t i = 0; i < m->ncalls; i++)
        if (!m->calls[i].function.p || !m->calls[i].args_json.p || !m->calls[i].kwargs_json.p)
            return *err = "a call without its function or arguments", -1;
    return 0;
}

int code_wire_decode(const uint8_t *buf, size_t n, code_wire_msg *m, const char **err)
{
    memset(m, 0, sizeof(*m));
    if (n < 1 || !known_type(buf[0])) {
        *err = "unknown message type";
        return -1;
    }
    m->type = (code_wire_type)buf[0];
    size_t off = 1;
    while (off < n) {
        if (n - off < 5) {
            *err = "truncated field header";
            goto bad;
        }
        unsigned tag = buf[off];
        uint32_t len = get_u32(buf + off + 1);
        off += 5;
        if (len > n - off) {
            *err = "field longer than its frame";
            goto bad;
        }
        if (one_field(m, tag, buf + off, len, err) < 0)
            goto bad;
        off += len;
    }
    if (check(m, err) < 0)
        goto bad;
    return 0;
bad:
    code_wire_msg_free(m);
    return -1;
}

void code_wire_msg_free(code_wire_msg *m)
{
    cella_free(m->inputs);
    cella_free(m->functions);
    cella_free(m->results);
    cella_free(m->calls);
    cella_free(m->pending);
    m->inputs = NULL;
    m->functions = NULL;
    m->results = NULL;
    m->calls = NULL;
    m->pending = NULL;
    m->ninputs = m->nfunctions = m->nresults = m->ncalls = m->npending = 0;
}

static code_wire_str wstr(const char *s, size_t n)
{
    return (code_wire_str){s, s ? n : 0};
}

void code_wire_from_step(code_wire_msg *m, const code_step *st, bool done, uint64_t out_max)
{
    memset(m, 0, sizeof(*m));
    m->type = CW_STEP;
    m->kind = st->kind;
    m->done = done;
    if (st->result_json)
        m->result_json = wstr(st->result_json, strlen(st->result_json));
    if (st->ncalls) {
        m->calls = cella_calloc(st->ncalls, sizeof(*m->calls));
        m->ncalls = st->ncalls;
        for (size_t i = 0; i < st->ncalls; i++) {
            const code_hostcall *c = &st->calls[i];
            m->calls[i] = (code_wire_call){
                c->id, wstr(c->function, c->function ? strlen(c->function) : 0),
                wstr(c->args_json ? c->args_json : "[]", c->args_json ? strlen(c->args_json) : 2),
                wstr(c->kwargs_json ? c->kwargs_json : "{}",
                     c->kwargs_json ? strlen(c->kwargs_json) : 2)};
            if (!m->calls[i].function.p)
                m->calls[i].function = wstr("", 0);
        }
    }
    m->pending = st->npending ? cella_malloc(st->npending * sizeof(uint64_t)) : NULL;
    if (st->npending)
        memcpy(m->pending, st->pending, st->npending * sizeof(uint64_t));
    m->npending = st->npending;
    size_t out_n = st->out ? st->out_len : 0;
    if (out_n > out_max) {
        out_n = (size_t)out_max;
        m->out_truncated = true;
    }
    m->out = wstr(st->out ? st->out : "", out_n);
    m->duration_us = st->duration_us;
    if (st->kind == CODE_STEP_ERROR) {
        const char *t = st->error.type ? st->error.type : "Exception";
        m->err_type = wstr(t, strlen(t));
        m->err_msg = wstr(st->error.msg, strnlen(st->error.msg, sizeof(st->error.msg)));
        m->err_line = st->error.line;
    }
}

/* ---- frame I/O -------------------------------------------------------------- */

/* n bytes, waiting at most until deadline (monotonic ns; 0: no limit).
 * 0, or -1 with errno (EPROTO at an early end, ETIMEDOUT); *got says how
 * much came. */
static int read_exact(int fd, uint8_t *p, size_t n, int64_t deadline, size_t *got)
{
    *got = 0;
    while (*got < n) {
        if (deadline) {
            int64_t left = deadline - clock_now_ns();
            if (left <= 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            int ms = (int)(left / 1000000) + 1;
            int pr = poll(&pf, 1, ms);
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr < 0)
                return -1;
            if (pr == 0)
                continue;
        }
        ssize_t r = read(fd, p + *got, n - *got);
        if (r < 0 && (errno == EINTR || (deadline && errno == EAGAIN)))
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            errno = EPROTO;
            return -1;
        }
        *got += (size_t)r;
    }
    return 0;
}

int code_wire_read(int fd, cbuf *buf, size_t max, int64_t deadline)
{
    uint8_t h[4];
    size_t got;
    if (read_exact(fd, h, 4, deadline, &got) < 0)
        return got == 0 && errno == EPROTO ? 1 : -1;
    uint32_t len = get_u32(h);
    if (len == 0 || len > max) {
        errno = EPROTO;
        return -1;
    }
    cbuf_reset(buf);
    uint8_t *p = cbuf_reserve(buf, len);
    if (read_exact(fd, p, len, deadline, &got) < 0)
        return -1;
    cbuf_commit(buf, len);
    return 0;
}

int code_wire_write(int fd, const cbuf *frame)
{
    const uint8_t *p = cbuf_head(frame);
    size_t n = cbuf_avail(frame);
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
