/* code_run_load: a dump's record (parsed and checked by code_dump_load.c)
 * replayed through the ordinary host interface. The run is deterministic,
 * so a genuine record makes the same calls in the same order and pauses
 * where it was dumped; a record that does not (forged, or made by a program
 * that behaves otherwise) is refused as soon as a step differs.
 *
 * The dumped limits apply, each capped by the host's own (opts->limits)
 * where the host sets one: code_run.h says the dumped ones win, which is
 * what a host that sets none gets. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_dump_int.h"

/* A call seen during the replay, by id - 1: kept so the final step can list
 * calls made in earlier steps that are still pending. */
typedef struct seen_call {
    char *function, *args, *kwargs;
} seen_call;

typedef struct replay {
    const code_run_record *rec;
    seen_call *calls;
    uint64_t next_id;            /* the id the run's next call must carry */
    uint64_t duration_us;        /* interpreting time the replay took */
} replay;

static char *dup_or_die(const char *s)
{
    char *c = strdup(s ? s : "");
    if (!c)
        abort();
    return c;
}

/* st is a CALL step whose new calls are the recorded ones, in order, and
 * that hands over no output: a genuine replay prints exactly the out_len
 * bytes that are skipped, so more is a record that lies. */
static bool take_calls(replay *rp, const code_step *st)
{
    if (st->kind != CODE_STEP_CALL || st->out_len)
        return false;
    for (size_t i = 0; i < st->ncalls; i++) {
        const code_hostcall *c = &st->calls[i];
        if (c->id != rp->next_id || c->id > rp->rec->ncalls || !c->function ||
            strcmp(c->function, rp->rec->calls[c->id - 1].function) != 0)
            return false;
        seen_call *s = &rp->calls[c->id - 1];
        s->function = dup_or_die(c->function);
        s->args = dup_or_die(c->args_json ? c->args_json : "[]");
        s->kwargs = dup_or_die(c->kwargs_json ? c->kwargs_json : "{}");
        rp->next_id++;
    }
    return true;
}

static bool is_pending(const code_step *st, uint64_t id)
{
    for (size_t i = 0; i < st->npending; i++)
        if (st->pending[i] == id)
            return true;
    return false;
}

static bool replay_batch(replay *rp, code_run *r, const code_rec_batch *b, code_step *st)
{
    if (!take_calls(rp, st))
        return false;
    code_result *res = calloc(b->n, sizeof(*res));
    if (!res)
        abort();
    for (size_t k = 0; k < b->n; k++) {
        const code_rec_result *x = &b->results[k];
        if (!is_pending(st, x->call_id)) {
            free(res);
            return false;
        }
        res[k] = (code_result){.call_id = x->call_id, .value_json = x->value_json,
                               .exc_type = x->exc_type, .exc_message = x->exc_message};
    }
    rp->duration_us += st->duration_us;
    code_step_clear(st);
    code_run_resume(r, res, b->n, st);
    free(res);
    return true;
}

/* The step a host answers: every pending call in full, no output (it was
 * handed over before the dump), and the time the replay took, which the
 * run's time limit counted too. */
static void final_step(replay *rp, const code_step *last, code_step *st)
{
    memset(st, 0, sizeof(*st));
    st->kind = CODE_STEP_CALL;
    size_t n = last->npending;
    st->calls = calloc(n ? n : 1, sizeof(*st->calls));
    st->pending = calloc(n ? n : 1, sizeof(*st->pending));
    if (!st->calls || !st->pending)
        abort();
    for (size_t i = 0; i < n; i++) {
        uint64_t id = last->pending[i];
        seen_call *s = &rp->calls[id - 1];
        st->pending[i] = id;
        st->calls[i] = (code_hostcall){.id = id, .function = dup_or_die(s->function),
                                   .args_json = dup_or_die(s->args),
                                   .kwargs_json = dup_or_die(s->kwargs)};
    }
    st->ncalls = st->npending = n;
    st->duration_us = rp->duration_us + last->duration_us;
}

static int no_replay(code_error *err, const code_step *st)
{
    if (st->kind == CODE_STEP_ERROR && st->error.type)
        return code_error_set(err, "ValueError", 0, 0,
                              "the code dump does not replay (the run ended with %s: %.150s)",
                              st->error.type, st->error.msg);
    if (st->kind == CODE_STEP_COMPLETE)
        return code_error_set(err, "ValueError", 0, 0,
                              "the code dump does not replay (the run completed)");
    return code_error_set(err, "ValueError", 0, 0,
                          "the code dump does not replay (the run made other calls)");
}

/* The dumped limit, but no more than the host's own when it sets one: a
 * forged dump must not grant itself more time or memory than the host gives
 * any run. 0 means "the default" on both sides. */
static uint64_t cap(uint64_t dumped, uint64_t host, uint64_t dflt)
{
    if (!host)
        return dumped;
    uint64_t d = dumped ? dumped : dflt;
    return d < host ? dumped : host;
}

static code_limits capped(const code_limits *d, const code_run_opts *opts)
{
    if (!opts)
        return *d;
    const code_limits *h = &opts->limits;
    return (code_limits){
        .max_time_us = cap(d->max_time_us, h->max_time_us, CODE_DEFAULT_MAX_TIME_US),
        .max_bytes = (size_t)cap(d->max_bytes, h->max_bytes, CODE_DEFAULT_MAX_BYTES),
        .max_allocs = (size_t)cap(d->max_allocs, h->max_allocs, UINT64_MAX),
        .max_depth = (uint32_t)cap(d->max_depth, h->max_depth, CODE_DEFAULT_MAX_DEPTH),
        .max_calls = (uint32_t)cap(d->max_calls, h->max_calls, CODE_DEFAULT_MAX_CALLS),
        .max_nesting = (uint32_t)cap(d->max_nesting, h->max_nesting, CODE_DEFAULT_MAX_NESTING),
    };
}

int code_run_load(const char *buf, size_t len, const code_run_opts *opts, code_run **out,
                  code_step *st, code_error *err)
{
    *out = NULL;
    if (st)
        memset(st, 0, sizeof(*st));
    code_run_record rec;
    if (code_dump_parse(buf, len, &rec, err) < 0)
        return -1;
    code_run_opts o = {
        .limits = capped(&rec.limits, opts),
        .inputs = rec.inputs,
        .ninputs = rec.ninputs,
        .functions = (const char *const *)rec.functions,
        .nfunctions = rec.nfunctions,
        .top_level_await = rec.top_level_await,
        .alloc = opts ? opts->alloc : NULL,
        .alloc_ud = opts ? opts->alloc_ud : NULL,
        .filename = opts ? opts->filename : NULL,
    };
    code_error e = {0};
    code_run *r;
    if (code_run_new(rec.src, rec.src_len, &o, &r, &e) < 0) {
        char msg[200];
        code_error_format(&e, msg, sizeof(msg));
        code_dump_record_free(&rec);
        return code_error_set(err, "ValueError", 0, 0,
                              "the code dump does not replay (%s)", msg);
    }
    replay rp = {.rec = &rec, .next_id = 1};
    rp.calls = calloc(rec.ncalls ? rec.ncalls : 1, sizeof(*rp.calls));
    if (!rp.calls)
        abort();
    code_run_skip_output(r, rec.out_len);
    code_step s;
    memset(&s, 0, sizeof(s));
    code_run_start(r, &s);
    bool ok = true;
    for (size_t i = 0; ok && i < rec.nbatches; i++)
        ok = replay_batch(&rp, r, &rec.batches[i], &s);
    /* paused again, having made every recorded call */
    ok = ok && take_calls(&rp, &s) && rp.next_id - 1 == rec.ncalls && s.npending > 0;
    for (size_t i = 0; ok && i < s.npending; i++)
        ok = s.pending[i] >= 1 && s.pending[i] < rp.next_id;
    if (ok && st)
        final_step(&rp, &s, st);
    if (ok) {
        /* The replayed run has handed over (by skipping it) the output the
         * dumped one had: its record says so, whether or not code_run.c
         * counts skipped bytes, so that it dumps again to the same record.
         * The record is r's own, non-const object. */
        ((code_run_record *)code_run_record_of(r))->out_len = rec.out_len;
    }
    if (!ok) {
        no_replay(err, &s);
        code_run_free(r);
        r = NULL;
    }
    code_step_clear(&s);
    for (size_t i = 0; i < rec.ncalls; i++) {
        free(rp.calls[i].function);
        free(rp.calls[i].args);
        free(rp.calls[i].kwargs);
    }
    free(rp.calls);
    code_dump_record_free(&rec);
    if (!r)
        return -1;
    *out = r;
    return 0;
}

int code_run_dump(code_run *r, char **buf, size_t *len, code_error *err)
{
    if (code_run_done(r)) {
        *buf = NULL;
        *len = 0;
        return code_error_set(err, "ValueError", 0, 0,
                              "the run has ended: only a paused run can be dumped");
    }
    return code_dump_write(code_run_record_of(r), buf, len, err);
}
