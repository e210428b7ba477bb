/* A fake of the interpreter's host interface (code/code_run.h), linked only
 * into the pool's test worker (test_code_fake_worker), never into cella: it
 * lets tests/unit/test_code_pool.c drive the real worker loop, seccomp filter
 * and pool through every path without the interpreter. Its "programs" are
 * one command per line:
 *   print TEXT        output TEXT and a newline
 *   call FN JSON      a host call FN with args JSON (an array); pauses
 *   gather N FN       N host calls FN at once; pauses until all are answered
 *   result JSON       completes with JSON; "result $last" with the last answer
 *   raise TYPE MSG    ends with that exception
 *   spin              loops for ever (the pool's deadline must kill it)
 *   busy MS           loops for MS milliseconds
 *   crash             writes through NULL (SIGSEGV)
 *   syscall           calls getppid (the seccomp filter must kill it)
 *   exec              maps executable memory (the filter must refuse it)
 *   alloc MB          allocates and touches MB MiB (MemoryError when it cannot)
 *   big MB            completes with a string of MB MiB
 *   limits            completes with the run's limits as the host gave them
 *                     (new: the RUN's; loaded: the LOAD's), as a JSON array
 * Dumps are "pc ncalls npending id... lastlen\nlast src". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "code/code_run.h"

struct code_run {
    char *src;
    size_t pc;                    /* byte offset of the next line */
    uint64_t ncalls;
    uint64_t pending[16];
    size_t npending;
    char *last;                   /* last answer's JSON, or NULL */
    char exc_type[64], exc_msg[128];
    bool done;
    char *out;
    size_t out_len;
    code_limits lim;              /* the host's (opts->limits) */
};

static void out_add(code_run *r, const char *s, size_t n)
{
    r->out = realloc(r->out, r->out_len + n + 1);
    memcpy(r->out + r->out_len, s, n);
    r->out_len += n;
    r->out[r->out_len] = '\0';
}

static void take_out(code_run *r, code_step *st)
{
    st->out = r->out ? r->out : strdup("");
    st->out_len = r->out_len;
    r->out = NULL;
    r->out_len = 0;
}

static void fail(code_run *r, code_step *st, const char *type, const char *msg, int line)
{
    st->kind = CODE_STEP_ERROR;
    st->error.type = type;
    st->error.line = line;
    snprintf(st->error.msg, sizeof(st->error.msg), "%s", msg);
    r->done = true;
}

static void add_call(code_run *r, code_step *st, const char *fn, const char *args)
{
    code_hostcall *c = &st->calls[st->ncalls++];
    c->id = ++r->ncalls;
    c->function = strdup(fn);
    c->args_json = strdup(args);
    c->kwargs_json = strdup("{}");
    r->pending[r->npending++] = c->id;
}

static void pending_out(code_run *r, code_step *st)
{
    st->kind = CODE_STEP_CALL;
    st->npending = r->npending;
    st->pending = malloc(sizeof(uint64_t) * (r->npending ? r->npending : 1));
    memcpy(st->pending, r->pending, sizeof(uint64_t) * r->npending);
}

static void step(code_run *r, code_step *st)
{
    memset(st, 0, sizeof(*st));
    int line = 1;
    bool stopped = false;
    for (const char *q = r->src; q < r->src + r->pc; q++)
        line += *q == '\n';
    while (r->src[r->pc]) {
        const char *l = r->src + r->pc;
        size_t n = strcspn(l, "\n");
        char cmd[64] = "", a[256] = "", b[256] = "";
        char buf[8192];
        snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) - 1 ? n : sizeof(buf) - 1), l);
        sscanf(buf, "%63s %255s %255[^\n]", cmd, a, b);
        r->pc += n + (l[n] == '\n');
        if (!strcmp(cmd, "print")) {
            const char *t = buf + 6 <= buf + strlen(buf) ? buf + 6 : "";
            out_add(r, t, strlen(t));
            out_add(r, "\n", 1);
        } else if (!strcmp(cmd, "call")) {
            st->calls = calloc(1, sizeof(code_hostcall));
            add_call(r, st, a, b[0] ? b : "[]");
            pending_out(r, st);
            stopped = true;
            break;
        } else if (!strcmp(cmd, "gather")) {
            int k = atoi(a);
            st->calls = calloc((size_t)k, sizeof(code_hostcall));
            for (int i = 0; i < k && i < 16; i++)
                add_call(r, st, b, "[]");
            pending_out(r, st);
            stopped = true;
            break;
        } else if (!strcmp(cmd, "result")) {
            stopped = true;
            if (!strcmp(a, "$last") && r->exc_type[0]) {
                fail(r, st, r->exc_type, r->exc_msg, line);
            } else {
                st->kind = CODE_STEP_COMPLETE;
                st->result_json = strdup(!strcmp(a, "$last") ? (r->last ? r->last : "null")
                                                              : buf + 7);
                r->done = true;
            }
            break;
        } else if (!strcmp(cmd, "raise")) {
            snprintf(r->exc_type, sizeof(r->exc_type), "%.63s", a);
            fail(r, st, r->exc_type, b, line);
            stopped = true;
            break;
        } else if (!strcmp(cmd, "spin")) {
            for (volatile unsigned long i = 0;; i++)
                ;
        } else if (!strcmp(cmd, "busy")) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            do
                clock_gettime(CLOCK_MONOTONIC, &t1);
            while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 <
                   atol(a));
        } else if (!strcmp(cmd, "crash")) {
            raise(SIGSEGV);
        } else if (!strcmp(cmd, "syscall")) {
            syscall(SYS_getppid);
        } else if (!strcmp(cmd, "exec")) {
            void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                out_add(r, "refused\n", 8);
        } else if (!strcmp(cmd, "limits")) {
            char j[200];
            snprintf(j, sizeof(j), "[%llu,%llu,%llu,%llu,%llu,%llu]",
                     (unsigned long long)r->lim.max_time_us, (unsigned long long)r->lim.max_bytes,
                     (unsigned long long)r->lim.max_allocs, (unsigned long long)r->lim.max_depth,
                     (unsigned long long)r->lim.max_calls, (unsigned long long)r->lim.max_nesting);
            st->kind = CODE_STEP_COMPLETE;
            st->result_json = strdup(j);
            r->done = true;
            stopped = true;
            break;
        } else if (!strcmp(cmd, "big")) {
            size_t len = (size_t)atol(a) << 20;
            char *j = malloc(len + 3);
            j[0] = '"';
            memset(j + 1, 'x', len);
            j[len + 1] = '"';
            j[len + 2] = '\0';
            st->kind = CODE_STEP_COMPLETE;
            st->result_json = j;
            r->done = true;
            stopped = true;
            break;
        } else if (!strcmp(cmd, "alloc")) {
            size_t mb = (size_t)atol(a);
            char *p = malloc(mb << 20);
            if (!p) {
                fail(r, st, "MemoryError", "cannot allocate", line);
                stopped = true;
                break;
            }
            memset(p, 1, mb << 20);
            free(p);
        }
        line++;
    }
    if (!stopped) {
        st->kind = CODE_STEP_COMPLETE;
        st->result_json = strdup("null");
        r->done = true;
    }
    take_out(r, st);
}

int code_run_new(const char *src, size_t n, const code_run_opts *opts, code_run **out,
                 code_error *err)
{
    if (n >= 6 && !memcmp(src, "syntax", 6))
        return code_error_set(err, "SyntaxError", 1, 1, "invalid syntax");
    code_run *r = calloc(1, sizeof(*r));
    r->src = strndup(src, n);
    r->lim = opts->limits;
    for (size_t i = 0; i < opts->ninputs; i++) {
        char head[80];
        snprintf(head, sizeof(head), "input %s", opts->inputs[i].name);
        /* "input NAME" lines become "result <its JSON>" */
        char *hit = strstr(r->src, head);
        if (hit) {
            size_t pre = (size_t)(hit - r->src), tail = strlen(hit + strlen(head));
            char *s = malloc(pre + 8 + strlen(opts->inputs[i].json) + tail + 1);
            sprintf(s, "%.*sresult %s%s", (int)pre, r->src, opts->inputs[i].json,
                    hit + strlen(head));
            free(r->src);
            r->src = s;
        }
    }
    *out = r;
    return 0;
}

void code_run_start(code_run *r, code_step *st)
{
    step(r, st);
}

void code_run_resume(code_run *r, const code_result *res, size_t n, code_step *st)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < r->npending && r->pending[j] != res[i].call_id)
            j++;
        if (j == r->npending) {
            memset(st, 0, sizeof(*st));
            st->kind = CODE_STEP_ERROR;
            st->error.type = "ValueError";
            snprintf(st->error.msg, sizeof(st->error.msg), "call %llu is not pending",
                     (unsigned long long)res[i].call_id);
            st->out = strdup("");
            return;
        }
        r->pending[j] = r->pending[--r->npending];
        free(r->last);
        r->last = res[i].value_json ? strdup(res[i].value_json) : NULL;
        r->exc_type[0] = '\0';
        if (res[i].exc_type) {
            snprintf(r->exc_type, sizeof(r->exc_type), "%.63s", res[i].exc_type);
            snprintf(r->exc_msg, sizeof(r->exc_msg), "%.127s", res[i].exc_message);
        }
    }
    if (r->npending) {
        memset(st, 0, sizeof(*st));
        pending_out(r, st);
        take_out(r, st);
        return;
    }
    step(r, st);
}

int code_run_dump(code_run *r, char **buf, size_t *len, code_error *err)
{
    if (strstr(r->src, "nodump"))
        return code_error_set(err, "RuntimeError", 0, 0, "this run cannot be dumped");
    size_t cap = strlen(r->src) + (r->last ? strlen(r->last) : 0) + 512;
    char *s = malloc(cap);
    int k = snprintf(s, cap, "%zu %llu %zu", r->pc, (unsigned long long)r->ncalls, r->npending);
    for (size_t i = 0; i < r->npending; i++)
        k += snprintf(s + k, cap - (size_t)k, " %llu", (unsigned long long)r->pending[i]);
    k += snprintf(s + k, cap - (size_t)k, " %zu\n%s%s", r->last ? strlen(r->last) : 0,
                  r->last ? r->last : "", r->src);
    *buf = s;
    *len = (size_t)k;
    return 0;
}

int code_run_load(const char *buf, size_t len, const code_run_opts *opts, code_run **out,
                  code_step *st, code_error *err)
{
    code_run *r = calloc(1, sizeof(*r));
    char *s = strndup(buf, len);
    char *p = s;
    unsigned long long nc;
    size_t lastlen;
    int used;
    if (sscanf(p, "%zu %llu %zu%n", &r->pc, &nc, &r->npending, &used) != 3 || r->npending > 16) {
        free(s);
        free(r);
        return code_error_set(err, "ValueError", 0, 0, "bad dump");
    }
    r->ncalls = nc;
    p += used;
    for (size_t i = 0; i < r->npending; i++) {
        unsigned long long id;
        sscanf(p, " %llu%n", &id, &used);
        r->pending[i] = id;
        p += used;
    }
    sscanf(p, " %zu%n", &lastlen, &used);
    p += used + 1;
    if (lastlen)
        r->last = strndup(p, lastlen);
    r->src = strdup(p + lastlen);
    r->lim = opts->limits;
    free(s);
    *out = r;
    if (st) {
        memset(st, 0, sizeof(*st));
        pending_out(r, st);
        st->out = strdup("");
    }
    return 0;
}

void code_run_free(code_run *r)
{
    if (!r)
        return;
    free(r->src);
    free(r->last);
    free(r->out);
    free(r);
}

void code_step_clear(code_step *st)
{
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

#include "core/code_worker.h"

/* `test_code_fake_worker code-worker ARGS...`, as the pool starts cella. */
int main(int argc, char **argv)
{
    return code_worker_main(argc - 2, argv + 2);
}
