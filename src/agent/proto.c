#include "agent/proto.h"

#include <string.h>

#include "agent/wire.h"
#include "util/alloc.h"

static void put_hdr_at(uint8_t *p, uint32_t len, uint16_t type, uint16_t flags, uint32_t id)
{
    p[0] = (uint8_t)len;
    p[1] = (uint8_t)(len >> 8);
    p[2] = (uint8_t)(len >> 16);
    p[3] = (uint8_t)(len >> 24);
    p[4] = (uint8_t)type;
    p[5] = (uint8_t)(type >> 8);
    p[6] = (uint8_t)flags;
    p[7] = (uint8_t)(flags >> 8);
    p[8] = (uint8_t)id;
    p[9] = (uint8_t)(id >> 8);
    p[10] = (uint8_t)(id >> 16);
    p[11] = (uint8_t)(id >> 24);
}

void proto_put_frame(cbuf *out, uint16_t type, uint16_t flags, uint32_t id,
                     const void *payload, size_t n)
{
    uint8_t *h = cbuf_reserve(out, PROTO_HDR_SIZE + n);
    put_hdr_at(h, (uint32_t)n, type, flags, id);
    if (n)
        memcpy(h + PROTO_HDR_SIZE, payload, n);
    cbuf_commit(out, PROTO_HDR_SIZE + n);
}

size_t proto_begin_frame(cbuf *out, uint16_t type, uint16_t flags, uint32_t id)
{
    uint8_t *h = cbuf_reserve(out, PROTO_HDR_SIZE);
    size_t mark = out->len - out->off;      /* relative: compaction keeps it valid */
    put_hdr_at(h, 0, type, flags, id);
    cbuf_commit(out, PROTO_HDR_SIZE);
    return mark;
}

void proto_end_frame(cbuf *out, size_t mark)
{
    uint8_t *h = out->data + out->off + mark;
    uint32_t len = (uint32_t)(out->len - out->off - mark - PROTO_HDR_SIZE);
    h[0] = (uint8_t)len;
    h[1] = (uint8_t)(len >> 8);
    h[2] = (uint8_t)(len >> 16);
    h[3] = (uint8_t)(len >> 24);
}

uint8_t *proto_reserve_frame(cbuf *out, size_t max)
{
    return cbuf_reserve(out, PROTO_HDR_SIZE + max) + PROTO_HDR_SIZE;
}

void proto_commit_frame(cbuf *out, uint16_t type, uint16_t flags, uint32_t id, size_t n)
{
    put_hdr_at(out->data + out->len, (uint32_t)n, type, flags, id);
    cbuf_commit(out, PROTO_HDR_SIZE + n);
}

size_t proto_encode_fail_static(uint8_t *buf, size_t cap, int errnum, const char *msg)
{
    size_t ml = 0;
    while (msg[ml])
        ml++;
    if (cap < PROTO_HDR_SIZE + 12)
        return 0;
    if (ml > cap - PROTO_HDR_SIZE - 12)
        ml = cap - PROTO_HDR_SIZE - 12;
    uint8_t *p = buf + PROTO_HDR_SIZE;
    uint32_t v[3] = {PERR_SETUP, (uint32_t)errnum, (uint32_t)ml};
    for (int i = 0; i < 3; i++, p += 4)
        wire_le32(p, v[i]);
    for (size_t i = 0; i < ml; i++)
        *p++ = (uint8_t)msg[i];
    put_hdr_at(buf, (uint32_t)(12 + ml), PROTO_FAIL, 0, 0);
    return PROTO_HDR_SIZE + 12 + ml;
}

int proto_peek_frame(const cbuf *in, proto_hdr *h, const uint8_t **payload, cella_err *err)
{
    size_t avail = cbuf_avail(in);
    if (avail < PROTO_HDR_SIZE)
        return 0;
    wire_rd r;
    wire_rd_init(&r, cbuf_head(in), PROTO_HDR_SIZE);
    h->len = wire_get_u32(&r);
    uint32_t tf = wire_get_u32(&r);
    h->type = (uint16_t)tf;
    h->flags = (uint16_t)(tf >> 16);
    h->id = wire_get_u32(&r);
    if (h->type == 0 || h->type >= PROTO_TYPE_MAX)
        return cella_err_set(err, 0, "protocol: unknown frame type %u", h->type);
    if (h->len > PROTO_MAX_PAYLOAD)
        return cella_err_set(err, 0, "protocol: frame of %u bytes exceeds the limit", h->len);
    if (avail - PROTO_HDR_SIZE < h->len)
        return 0;
    *payload = cbuf_head(in) + PROTO_HDR_SIZE;
    return 1;
}

const char *proto_type_name(uint16_t type)
{
    static const char *const names[PROTO_TYPE_MAX] = {
        [PROTO_SETUP] = "SETUP",   [PROTO_READY] = "READY",         [PROTO_FAIL] = "FAIL",
        [PROTO_EXEC] = "EXEC",     [PROTO_STDIN] = "STDIN",         [PROTO_SIGNAL] = "SIGNAL",
        [PROTO_STARTED] = "STARTED", [PROTO_OUTPUT] = "OUTPUT",     [PROTO_STDIN_ACK] = "STDIN_ACK",
        [PROTO_EXIT] = "EXIT",     [PROTO_ERROR] = "ERROR",         [PROTO_LOG] = "LOG",
        [PROTO_OUTPUT_ACK] = "OUTPUT_ACK",
    };
    return type < PROTO_TYPE_MAX && names[type] ? names[type] : "?";
}

static int decoded(const wire_rd *r, const char *what, cella_err *err)
{
    if (!wire_rd_done(r))
        return cella_err_set(err, 0, "protocol: malformed %s message", what);
    return 0;
}

/* ---- setup ---- */

void proto_put_setup(cbuf *b, const proto_setup *s)
{
    wire_put_u32(b, s->version);
    wire_put_u32(b, s->flags);
    wire_put_str(b, s->hostname);
    wire_put_u32(b, s->uid);
    wire_put_u32(b, s->gid);
    wire_put_u64(b, s->rlimit_fsize);
    wire_put_u64(b, s->rlimit_nofile);
    wire_put_bytes(b, s->bpf, s->bpf_len);
    wire_put_u32(b, s->n_ops);
    for (uint32_t i = 0; i < s->n_ops; i++) {
        const proto_op *op = &s->ops[i];
        wire_put_u32(b, op->kind);
        wire_put_u32(b, op->flags);
        wire_put_u32(b, op->mode);
        wire_put_u32(b, (uint32_t)op->fd_index);
        wire_put_u64(b, op->size);
        wire_put_str(b, op->src);
        wire_put_str(b, op->dest);
        wire_put_bytes(b, op->data, op->data_len);
    }
}

int proto_get_setup(const uint8_t *p, size_t n, proto_setup *s, cella_err *err)
{
    memset(s, 0, sizeof(*s));
    wire_rd r;
    wire_rd_init(&r, p, n);
    s->version = wire_get_u32(&r);
    s->flags = wire_get_u32(&r);
    s->hostname = wire_get_str(&r);
    s->uid = wire_get_u32(&r);
    s->gid = wire_get_u32(&r);
    s->rlimit_fsize = wire_get_u64(&r);
    s->rlimit_nofile = wire_get_u64(&r);
    size_t bl;
    const uint8_t *bpf = wire_get_bytes(&r, &bl);
    if (bpf && bl) {
        s->bpf = cella_malloc(bl);
        memcpy(s->bpf, bpf, bl);
        s->bpf_len = bl;
    }
    uint32_t nops = wire_get_u32(&r);
    /* An op takes at least 36 bytes on the wire. */
    if (!r.err && (nops > PROTO_MAX_OPS || nops > (r.len - r.off) / 36))
        r.err = true;
    if (!r.err) {
        s->ops = cella_calloc(nops ? nops : 1, sizeof(proto_op));
        s->n_ops = nops;
    }
    for (uint32_t i = 0; !r.err && i < s->n_ops; i++) {
        proto_op *op = &s->ops[i];
        op->kind = wire_get_u32(&r);
        op->flags = wire_get_u32(&r);
        op->mode = wire_get_u32(&r);
        op->fd_index = (int32_t)wire_get_u32(&r);
        op->size = wire_get_u64(&r);
        op->src = wire_get_str(&r);
        op->dest = wire_get_str(&r);
        size_t dl;
        const uint8_t *d = wire_get_bytes(&r, &dl);
        if (d && dl) {
            op->data = cella_malloc(dl);
            memcpy(op->data, d, dl);
            op->data_len = dl;
        }
        if (!r.err && (op->kind == 0 || op->kind >= OP_KIND_MAX || !op->dest[0]))
            r.err = true;
    }
    if (!wire_rd_done(&r) || !s->hostname) {
        proto_setup_free(s);
        return cella_err_set(err, 0, "protocol: malformed setup message");
    }
    return 0;
}

void proto_setup_free(proto_setup *s)
{
    cella_free(s->hostname);
    cella_free(s->bpf);
    for (uint32_t i = 0; s->ops && i < s->n_ops; i++) {
        cella_free(s->ops[i].src);
        cella_free(s->ops[i].dest);
        cella_free(s->ops[i].data);
    }
    cella_free(s->ops);
    memset(s, 0, sizeof(*s));
}

/* ---- exec ---- */

void proto_put_exec(cbuf *b, const proto_exec *e)
{
    wire_put_strv(b, e->argv);
    wire_put_strv(b, e->env);
    wire_put_str(b, e->cwd);
    wire_put_u64(b, e->timeout_ms);
    wire_put_u64(b, e->stdout_cap);
    wire_put_u64(b, e->stderr_cap);
    wire_put_u32(b, e->flags);
}

int proto_get_exec(const uint8_t *p, size_t n, proto_exec *e, cella_err *err)
{
    memset(e, 0, sizeof(*e));
    wire_rd r;
    wire_rd_init(&r, p, n);
    e->argv = wire_get_strv(&r, PROTO_MAX_ARGS);
    e->env = wire_get_strv(&r, PROTO_MAX_ARGS);
    e->cwd = wire_get_str(&r);
    e->timeout_ms = wire_get_u64(&r);
    e->stdout_cap = wire_get_u64(&r);
    e->stderr_cap = wire_get_u64(&r);
    e->flags = wire_get_u32(&r);
    if (decoded(&r, "exec", err) < 0) {
        proto_exec_free(e);
        return -1;
    }
    if (!e->argv[0] || !e->argv[0][0]) {
        proto_exec_free(e);
        return cella_err_set(err, 0, "exec: empty command");
    }
    if (e->timeout_ms > PROTO_MAX_TIMEOUT_MS) {
        cella_err_set(err, 0, "exec: timeout of %llu ms is over the limit of %llu",
                      (unsigned long long)e->timeout_ms, (unsigned long long)PROTO_MAX_TIMEOUT_MS);
        proto_exec_free(e);
        return -1;
    }
    return 0;
}

void proto_exec_free(proto_exec *e)
{
    cella_strv_free(e->argv);
    cella_strv_free(e->env);
    cella_free(e->cwd);
    memset(e, 0, sizeof(*e));
}

/* ---- exit ---- */

void proto_put_exit(cbuf *b, const proto_exit *x)
{
    wire_put_u32(b, (uint32_t)x->exit_code);
    wire_put_u32(b, (uint32_t)x->signal);
    wire_put_u32(b, x->flags);
    wire_put_u64(b, x->stdout_bytes);
    wire_put_u64(b, x->stderr_bytes);
    wire_put_u64(b, x->duration_us);
    wire_put_u64(b, x->user_us);
    wire_put_u64(b, x->sys_us);
    wire_put_u64(b, x->max_rss_kb);
    wire_put_str(b, x->error);
}

int proto_get_exit(const uint8_t *p, size_t n, proto_exit *x, cella_err *err)
{
    memset(x, 0, sizeof(*x));
    wire_rd r;
    wire_rd_init(&r, p, n);
    x->exit_code = (int32_t)wire_get_u32(&r);
    x->signal = (int32_t)wire_get_u32(&r);
    x->flags = wire_get_u32(&r);
    x->stdout_bytes = wire_get_u64(&r);
    x->stderr_bytes = wire_get_u64(&r);
    x->duration_us = wire_get_u64(&r);
    x->user_us = wire_get_u64(&r);
    x->sys_us = wire_get_u64(&r);
    x->max_rss_kb = wire_get_u64(&r);
    x->error = wire_get_str(&r);
    if (decoded(&r, "exit", err) < 0) {
        proto_exit_free(x);
        return -1;
    }
    return 0;
}

void proto_exit_free(proto_exit *x)
{
    cella_free(x->error);
    x->error = NULL;
}

/* ---- errors ---- */

void proto_put_error(cbuf *b, const proto_error *e)
{
    wire_put_u32(b, e->code);
    wire_put_u32(b, (uint32_t)e->errnum);
    wire_put_str(b, e->message);
}

int proto_get_error(const uint8_t *p, size_t n, proto_error *e, cella_err *err)
{
    memset(e, 0, sizeof(*e));
    wire_rd r;
    wire_rd_init(&r, p, n);
    e->code = wire_get_u32(&r);
    e->errnum = (int32_t)wire_get_u32(&r);
    e->message = wire_get_str(&r);
    if (decoded(&r, "error", err) < 0) {
        proto_error_free(e);
        return -1;
    }
    return 0;
}

void proto_error_free(proto_error *e)
{
    cella_free(e->message);
    e->message = NULL;
}

int proto_error_to_err(const uint8_t *p, size_t n, cella_err *err)
{
    proto_error pe;
    if (proto_get_error(p, n, &pe, err) < 0)
        return -1;
    cella_err_set(err, pe.errnum, "%s", pe.message);
    proto_error_free(&pe);
    return -1;
}
