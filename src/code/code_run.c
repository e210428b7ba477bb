/* The run: code_run.h's host interface. code_run_new parses, runs the scope
 * pass and binds the inputs and host functions; the program then executes on
 * a coroutine stack of its own (code_coro.c), so a host call switches back
 * to the host, which returns a CALL step, and code_run_resume switches back
 * into the paused frames. Everything a replay needs is recorded
 * (code_run_int.h). */
#include "code/code_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "code/code_eval.h"
#include "code/code_json.h"
#include "code/code_parse.h"
#include "code/code_run_int.h"

struct code_run {
    code_vm vm;
    struct code_eval ev;
    code_arena arena;
    code_run_record rec;
    size_t capcalls, capbatches;   /* of rec.calls and rec.batches */
    bool started, done;
    uint64_t skip_out;
};

static uint64_t cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char *xstrdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (!d)
        abort();
    memcpy(d, s, n);
    return d;
}

/* ---- errors ---------------------------------------------------------------- */

/* The pending exception into err (type name, message, line); clears it. A
 * type the host named (not builtin) has no static name: it is kept after the
 * step's output text, which lives as long as the step (st may be NULL when
 * the caller sets the type itself). */
static void exc_to_error(code_run *r, code_error *err, code_step *st)
{
    code_vm *vm = &r->vm;
    cv e = code_exc_fetch(vm);
    memset(err, 0, sizeof(*err));
    if (!e) {
        err->type = "RuntimeError";
        snprintf(err->msg, sizeof(err->msg), "unknown error");
        return;
    }
    const code_type *t = cv_type(e);
    const code_type *bt = code_exc_type_by_name(t->name);
    if (bt == t || !st) {
        err->type = bt == t ? bt->name : "Exception";
    } else {
        size_t n = strlen(t->name);
        char *o = realloc(st->out, st->out_len + 1 + n + 1);
        if (!o)
            abort();
        memcpy(o + st->out_len + 1, t->name, n + 1);
        st->out = o;
        err->type = o + st->out_len + 1;
    }
    err->line = cv_kind(e) == CODE_K_EXC ? ((code_exc *)cv_obj(e))->line : vm->line;
    if (!err->line)
        err->line = vm->line;
    cv s = code_exc_str(vm, e);
    if (s) {
        snprintf(err->msg, sizeof(err->msg), "%s", code_str_cstr(s));
        code_decref(vm, s);
    } else {
        code_exc_clear(vm);
    }
    code_decref(vm, e);
}

/* ---- creating a run ---------------------------------------------------------- */

static bool is_identifier(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c >= 0x80))
            return false;
    }
    return true;
}

static void record_init(code_run *r, const char *src, size_t n, const code_run_opts *o)
{
    code_run_record *rec = &r->rec;
    rec->src = malloc(n + 1);
    if (!rec->src)
        abort();
    memcpy(rec->src, src, n);
    rec->src[n] = 0;
    rec->src_len = n;
    rec->limits = o->limits;
    rec->top_level_await = o->top_level_await;
    if (o->ninputs) {
        rec->inputs = calloc(o->ninputs, sizeof(code_input));
        if (!rec->inputs)
            abort();
        for (size_t i = 0; i < o->ninputs; i++) {
            rec->inputs[i].name = xstrdup(o->inputs[i].name);
            rec->inputs[i].json = xstrdup(o->inputs[i].json);
        }
        rec->ninputs = o->ninputs;
    }
    if (o->functions && o->nfunctions) {
        rec->functions = calloc(o->nfunctions, sizeof(char *));
        if (!rec->functions)
            abort();
        for (size_t i = 0; i < o->nfunctions; i++)
            rec->functions[i] = xstrdup(o->functions[i]);
        rec->nfunctions = o->nfunctions;
    }
}

static void record_free(code_run_record *rec)
{
    free(rec->src);
    for (size_t i = 0; i < rec->ninputs; i++) {
        free((char *)rec->inputs[i].name);
        free((char *)rec->inputs[i].json);
    }
    free(rec->inputs);
    for (size_t i = 0; i < rec->nfunctions; i++)
        free(rec->functions[i]);
    free(rec->functions);
    for (size_t i = 0; i < rec->nbatches; i++) {
        for (size_t j = 0; j < rec->batches[i].n; j++) {
            code_rec_result *x = &rec->batches[i].results[j];
            free(x->value_json);
            free(x->exc_type);
            free(x->exc_message);
        }
        free(rec->batches[i].results);
    }
    free(rec->batches);
    for (size_t i = 0; i < rec->ncalls; i++)
        free(rec->calls[i].function);
    free(rec->calls);
}

static int bind_inputs(code_run *r, const code_run_opts *o, code_error *err)
{
    code_vm *vm = &r->vm;
    struct code_eval *ev = &r->ev;
    for (size_t i = 0; i < o->ninputs; i++) {
        const code_input *in = &o->inputs[i];
        if (!in->name || !is_identifier(in->name))
            return code_error_set(err, "ValueError", 0, 0, "input name %s%s%s is not an identifier",
                                  in->name ? "'" : "", in->name ? in->name : "(null)",
                                  in->name ? "'" : "");
        const char *js = in->json ? in->json : "null";
        cv v = code_json_decode(vm, js, strlen(js));
        if (!v) {
            code_error e2;
            exc_to_error(r, &e2, NULL);
            return code_error_set(err, "ValueError", 0, 0, "input '%s': %s", in->name, e2.msg);
        }
        int g = code_prog_global(&ev->prog, in->name);
        if (g >= 0)
            code_setref(vm, &ev->gv[g], v);
        else
            code_decref(vm, v);
    }
    if (o->functions)
        for (size_t i = 0; i < o->nfunctions; i++) {
            int g = code_prog_global(&ev->prog, o->functions[i]);
            if (g < 0)
                continue;
            cv h = code_hostfn_new(vm, ev->prog.gname_str[g]);
            if (!h)
                return code_error_set(err, "MemoryError", 0, 0, "out of memory");
            code_setref(vm, &ev->gv[g], h);
        }
    return 0;
}

int code_run_new(const char *src, size_t n, const code_run_opts *opts, code_run **out,
                 code_error *err)
{
    static const code_run_opts none;
    const code_run_opts *o = opts ? opts : &none;
    code_run *r = calloc(1, sizeof(*r));
    if (!r)
        abort();
    *out = NULL;
    if (code_vm_init(&r->vm, &o->limits, o->alloc, o->alloc_ud)) {
        free(r);
        return code_error_set(err, "MemoryError", 0, 0, "out of memory");
    }
    code_vm *vm = &r->vm;
    struct code_eval *ev = &r->ev;
    vm->ev = ev;
    vm->hostdata = r;
    ev->run = r;
    ev->top_level_await = o->top_level_await;
    ev->host_any = !o->functions || o->nfunctions == 0;
    /* Saturating: a limit beyond 584 years must not wrap to a small one. */
    ev->max_time_ns = vm->limits.max_time_us > UINT64_MAX / 1000 ? UINT64_MAX
                                                                   : vm->limits.max_time_us * 1000ull;
    record_init(r, src, n, o);
    code_arena_init(&r->arena, &vm->mem);
    code_parse_opts po = {.max_nesting = (int)o->limits.max_nesting,
                          .top_level_await = o->top_level_await};
    code_module *mod;
    if (code_parse(src, n, &po, &r->arena, &mod, err) ||
        code_scope_pass(vm, mod, &r->arena, o->top_level_await, &ev->prog, err))
        goto fail;
    uint32_t ng = ev->prog.nglobals ? ev->prog.nglobals : 1;
    ev->gv = calloc(ng, sizeof(cv));
    ev->gcache = calloc(ng, sizeof(cv));
    ev->hcache = calloc(ng, sizeof(cv));
    if (!ev->gv || !ev->gcache || !ev->hcache)
        abort();
    if (bind_inputs(r, o, err))
        goto fail;
    *out = r;
    return 0;
fail:
    code_run_free(r);
    return -1;
}

/* ---- running ------------------------------------------------------------------- */

static void main_entry(void *arg)
{
    code_run *r = arg;
    code_vm *vm = &r->vm;
    struct code_eval *ev = &r->ev;
    cv res = CV_NULL;
    if (code_eval_module(vm, &res) == 0)
        ev->result = res;
    else if (!vm->exc)
        /* A failure that set no exception (a runtime bug) must not pass for
         * a run that completed with None. */
        code_raise(vm, &code_exc_RuntimeError,
                   "internal error: an operation failed without an exception");
    ev->finished = true;
    ev->waiting = NULL;
    code_ctx_switch(&ev->main, &ev->host, true);
}

static void take_output(code_run *r, code_step *st)
{
    code_sb *o = &r->vm.out;
    const char *p = o->p ? o->p : "";
    size_t len = o->len;
    /* the record counts everything printed, skipped or not: a run loaded
     * from a dump and dumped again skips the same bytes */
    r->rec.out_len += len;
    if (r->skip_out) {
        size_t k = len < r->skip_out ? len : (size_t)r->skip_out;
        p += k;
        len -= k;
        r->skip_out -= k;
    }
    st->out = malloc(len + 1);
    if (!st->out)
        abort();
    memcpy(st->out, p, len);
    st->out[len] = 0;
    st->out_len = len;
    o->len = 0;
}

/* After the run switched back to the host: the step. */
static void finish_step(code_run *r, code_step *st)
{
    code_vm *vm = &r->vm;
    struct code_eval *ev = &r->ev;
    uint64_t d = cpu_now() - ev->cpu_start_ns;
    vm->cpu_ns += d;
    st->duration_us = d / 1000;
    take_output(r, st);
    if (ev->finished) {
        r->done = true;
        code_ctx_release(&ev->main);
        if (vm->exc) {
            st->kind = CODE_STEP_ERROR;
            exc_to_error(r, &st->error, st);
            return;
        }
        size_t n;
        st->result_json = code_json_encode(vm, ev->result ? ev->result : CODE_NONE, &n);
        if (!st->result_json) {
            st->kind = CODE_STEP_ERROR;
            exc_to_error(r, &st->error, st);
            return;
        }
        st->kind = CODE_STEP_COMPLETE;
        return;
    }
    st->kind = CODE_STEP_CALL;
    st->ncalls = ev->nnew;
    st->calls = calloc(ev->nnew + 1, sizeof(code_hostcall));
    st->pending = calloc(ev->nfuts + 1, sizeof(uint64_t));
    if (!st->calls || !st->pending)
        abort();
    for (size_t i = 0; i < ev->nnew; i++) {
        st->calls[i].id = ev->newcalls[i].id;
        st->calls[i].function = ev->newcalls[i].function;
        st->calls[i].args_json = ev->newcalls[i].args;
        st->calls[i].kwargs_json = ev->newcalls[i].kwargs;
    }
    ev->nnew = 0;
    ev->newcall_bytes = 0;
    for (size_t i = 0; i < ev->nfuts; i++)
        st->pending[i] = ev->futs[i]->id;
    st->npending = ev->nfuts;
}

static void enter(code_run *r, code_ctx *to, code_step *st)
{
    code_vm *vm = &r->vm;
    struct code_eval *ev = &r->ev;
    ev->cpu_start_ns = cpu_now();
    ev->cur = to;
    code_ctx_switch(&ev->host, to, false);
    /* back on the host's stack, whose bounds are unknown: only the depth
     * count guards recursion until the run is entered again (each coroutine
     * sets its own bound when it resumes) */
    vm->stack_lo = NULL;
    finish_step(r, st);
}

void code_run_start(code_run *r, code_step *st)
{
    memset(st, 0, sizeof(*st));
    struct code_eval *ev = &r->ev;
    if (r->started || r->done) {
        st->kind = CODE_STEP_ERROR;
        code_error_set(&st->error, "RuntimeError", 0, 0, "the run was already started");
        return;
    }
    r->started = true;
    if (code_ctx_make(&ev->main, CODE_STACK_BIG, main_entry, r)) {
        r->done = true;
        st->kind = CODE_STEP_ERROR;
        code_error_set(&st->error, "MemoryError", 0, 0, "no stack for the run");
        return;
    }
    r->vm.stack_lo = code_ctx_lo(&ev->main);
    enter(r, &ev->main, st);
}

static code_future *pending_find(struct code_eval *ev, uint64_t id, size_t *at)
{
    for (size_t i = 0; i < ev->nfuts; i++)
        if (ev->futs[i]->id == id) {
            *at = i;
            return ev->futs[i];
        }
    return NULL;
}

static void resume_refuse(code_step *st, const char *what, unsigned long long id)
{
    st->kind = CODE_STEP_ERROR;
    code_error_set(&st->error, "ValueError", 0, 0, "call %llu %s", id, what);
}

void code_run_resume(code_run *r, const code_result *res, size_t n, code_step *st)
{
    memset(st, 0, sizeof(*st));
    code_vm *vm = &r->vm;
    struct code_eval *ev = &r->ev;
    if (!r->started || r->done || !ev->waiting) {
        st->kind = CODE_STEP_ERROR;
        code_error_set(&st->error, "ValueError", 0, 0, "the run is not waiting on host calls");
        return;
    }
    if (n == 0) {
        st->kind = CODE_STEP_ERROR;
        code_error_set(&st->error, "ValueError", 0, 0, "no results given");
        return;
    }
    cv *vals = calloc(n, sizeof(cv));
    if (!vals)
        abort();
    size_t i;
    for (i = 0; i < n; i++) {
        size_t at;
        for (size_t j = 0; j < i; j++)
            if (res[j].call_id == res[i].call_id) {
                resume_refuse(st, "answered twice", (unsigned long long)res[i].call_id);
                goto refuse;
            }
        if (!pending_find(ev, res[i].call_id, &at)) {
            resume_refuse(st, "is not pending", (unsigned long long)res[i].call_id);
            goto refuse;
        }
        if (res[i].exc_type) {
            const code_type *t = code_exc_type_by_name(res[i].exc_type);
            cv tv = t ? cv_of(t) : code_exc_type_dynamic(vm, res[i].exc_type);
            cv msg = tv ? code_str_from_cstr(vm, res[i].exc_message ? res[i].exc_message : "")
                        : CV_NULL;
            cv args = msg ? code_tuple_pack(vm, 1, msg) : CV_NULL;
            code_decref(vm, msg);
            vals[i] = args ? code_exc_new(vm, (const code_type *)cv_obj(tv), args) : CV_NULL;
            if (!t)
                code_decref(vm, tv);
        } else {
            const char *js = res[i].value_json ? res[i].value_json : "null";
            vals[i] = code_json_decode(vm, js, strlen(js));
        }
        if (!vals[i]) {
            exc_to_error(r, &st->error, NULL);
            st->error.type = "ValueError";
            st->kind = CODE_STEP_ERROR;
            goto refuse;
        }
    }
    /* accepted: record the batch, then answer */
    code_run_record *rec = &r->rec;
    if (rec->nbatches == r->capbatches) {
        r->capbatches = r->capbatches ? r->capbatches * 2 : 8;
        code_rec_batch *nb = realloc(rec->batches, r->capbatches * sizeof(*nb));
        if (!nb)
            abort();
        rec->batches = nb;
    }
    code_rec_batch *b = &rec->batches[rec->nbatches++];
    b->n = n;
    b->results = calloc(n, sizeof(code_rec_result));
    if (!b->results)
        abort();
    for (i = 0; i < n; i++) {
        b->results[i].call_id = res[i].call_id;
        b->results[i].value_json =
            res[i].exc_type ? NULL : xstrdup(res[i].value_json ? res[i].value_json : "null");
        b->results[i].exc_type = xstrdup(res[i].exc_type);
        b->results[i].exc_message =
            res[i].exc_type ? xstrdup(res[i].exc_message ? res[i].exc_message : "") : NULL;
        size_t at = 0;
        code_future *f = pending_find(ev, res[i].call_id, &at);
        if (!f)
            abort();   /* checked above */
        if (res[i].exc_type)
            f->exc = vals[i];
        else
            f->value = vals[i];
        f->done = true;
        memmove(&ev->futs[at], &ev->futs[at + 1], (ev->nfuts - at - 1) * sizeof(*ev->futs));
        ev->nfuts--;
        code_sched_wake(vm, f);
        code_decref(vm, cv_of(f));
    }
    free(vals);
    enter(r, ev->waiting, st);
    return;
refuse:
    for (size_t j = 0; j < n; j++)
        code_decref(vm, vals[j]);
    free(vals);
}

void code_run_free(code_run *r)
{
    if (!r)
        return;
    struct code_eval *ev = &r->ev;
    code_ctx_abandon(&ev->main);   /* released already if the run ended */
    code_ctx_host_done(&ev->host);
    if (r->vm.ev) {
        code_gens_release(&r->vm);
        code_sched_destroy(&r->vm);
    }
    for (size_t i = 0; i < ev->nnew; i++) {
        free(ev->newcalls[i].function);
        free(ev->newcalls[i].args);
        free(ev->newcalls[i].kwargs);
    }
    free(ev->newcalls);
    free(ev->futs);
    free(ev->dyn);
    free(ev->gv);
    free(ev->gcache);
    free(ev->hcache);
    record_free(&r->rec);
    code_arena_free(&r->arena);
    code_vm_destroy(&r->vm);
    free(r);
}

void code_step_clear(code_step *st)
{
    if (!st)
        return;
    free(st->result_json);
    for (size_t i = 0; i < st->ncalls; i++) {
        free(st->calls[i].function);
        free(st->calls[i].args_json);
        free(st->calls[i].kwargs_json);
    }
    free(st->calls);
    free(st->pending);
    free(st->out);
    memset(st, 0, sizeof(*st));
}

bool code_run_done(const code_run *r)
{
    return r->done;
}

const code_run_record *code_run_record_of(const code_run *r)
{
    return &r->rec;
}

void code_run_skip_output(code_run *r, uint64_t out_len)
{
    r->skip_out = out_len;
}

int code_host_note_call(code_vm *vm, char *function, char *args_json, char *kwargs_json)
{
    struct code_eval *ev = vm->ev;
    code_run *r = vm->hostdata;
    if (ev->nnew == ev->capnew) {
        size_t nc = ev->capnew ? ev->capnew * 2 : 4;
        void *nv = realloc(ev->newcalls, nc * sizeof(*ev->newcalls));
        if (!nv)
            abort();
        ev->newcalls = nv;
        ev->capnew = nc;
    }
    if (r->rec.ncalls == r->capcalls) {
        r->capcalls = r->capcalls ? r->capcalls * 2 : 8;
        code_rec_call *rc = realloc(r->rec.calls, r->capcalls * sizeof(*rc));
        if (!rc)
            abort();
        r->rec.calls = rc;
    }
    r->rec.calls[r->rec.ncalls++].function = xstrdup(function);
    uint64_t id = ++ev->next_call_id;
    ev->ncalls++;
    ev->newcalls[ev->nnew].id = id;
    ev->newcalls[ev->nnew].function = function;
    ev->newcalls[ev->nnew].args = args_json;
    ev->newcalls[ev->nnew].kwargs = kwargs_json;
    ev->nnew++;
    return 0;
}
