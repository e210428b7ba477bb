/* cella-bench-code: code mode's interpreter (in process, through code_run.h)
 * against CPython 3.11 (timed inside the interpreter: bench/code_py.py) and
 * against Pydantic's Monty under Node (bench/code_monty.mjs, @pydantic/monty
 * from npm, installed into a cache directory on first use), on the same
 * workloads in one run:
 *
 *   cella-bench-code [--runs N] [--quick] [--python PATH] [--node PATH]
 *                    [--npm-dir DIR] [--no-monty] [--write FILE]
 *
 * Each engine times the whole of a run, compilation included: for CPython
 * compile() and exec, for Monty `new Monty(src).run()`, for cella
 * code_run_new + code_run_start. The workload sources are written once here
 * and handed to the other two as a JSON file, so all three run the same text.
 * Prints a Markdown table (medians; µs or ms; ratios cella/CPython and
 * cella/Monty) and, with --write, replaces the block between the markers below
 * in FILE (docs/performance.md). An engine that cannot run (Node or the npm
 * package missing, cella's interpreter not built) is reported with the reason,
 * never a failure of the bench. */

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#include "code/code_run.h"

#ifndef BENCH_SRC_DIR
#define BENCH_SRC_DIR "bench"
#endif
#ifndef BENCH_NPM_DIR
#define BENCH_NPM_DIR "build/bench-npm"
#endif
#define MONTY_PKG "@pydantic/monty@0.0.18"

#define BEGIN_MARK "<!-- bench:code:begin -->"
#define END_MARK "<!-- bench:code:end -->"

extern char **environ;

typedef enum { W_TINY, W_RUN, W_HOST } wkind;

typedef struct workload {
    const char *name;
    wkind kind;
    int iters;                   /* TINY: runs per timed batch; HOST: calls per run */
    const char *src;
} workload;

/* The host function of W_HOST is f(x) = x + 1, in every engine. */
static const workload WORKLOADS[] = {
    {"start+run `1 + 2`", W_TINY, 20000, "1 + 2"},
    {"fib(25)", W_RUN, 0,
     "def fib(n):\n"
     "    if n < 2:\n"
     "        return n\n"
     "    return fib(n - 1) + fib(n - 2)\n"
     "fib(25)"},
    {"loop, 1,000,000 iterations", W_RUN, 0,
     "total = 0\n"
     "for i in range(1000000):\n"
     "    total += i\n"
     "total"},
    {"dict: 100k updates of 1k str keys", W_RUN, 0,
     "d = {}\n"
     "for i in range(100000):\n"
     "    k = \"k\" + str(i % 1000)\n"
     "    d[k] = d.get(k, 0) + i\n"
     "count = 0\n"
     "for k in d:\n"
     "    if d[k] % 2 == 0:\n"
     "        count += 1\n"
     "count + len(d)"},
    {"str: f-strings, join, split, upper, replace", W_RUN, 0,
     "parts = []\n"
     "for i in range(20000):\n"
     "    parts.append(f\"item-{i}:{i * 3}\")\n"
     "s = \",\".join(parts)\n"
     "fields = s.split(\",\")\n"
     "u = s.upper().replace(\"ITEM\", \"x\")\n"
     "n = sum(len(p) for p in fields if p.startswith(\"item-1\"))\n"
     "n + len(u) + u.count(\"x\")"},
    {"list: comprehension, sorted, sort(key=)", W_RUN, 0,
     "xs = [(i * 7919) % 100003 for i in range(100000)]\n"
     "ys = sorted(xs)\n"
     "zs = [x * 2 for x in ys if x % 3]\n"
     "xs.sort(key=lambda v: -v)\n"
     "ws = list(reversed(zs))[:10]\n"
     "len(zs) + xs[0] + sum(ws)"},
    {"host call round trip", W_HOST, 1000,
     "t = 0\n"
     "for i in range(1000):\n"
     "    t += f(i)\n"
     "t"},
};
#define NW (sizeof(WORKLOADS) / sizeof(WORKLOADS[0]))

enum { E_CELLA, E_PY, E_MONTY, NE };
static const char *const ENGINE[NE] = {"cella", "CPython", "Monty"};

typedef struct cell {
    bool ok;
    double us;                   /* per run (TINY, RUN) or per call (HOST) */
    char result[128];            /* the program's value as JSON */
    char why[256];               /* when !ok */
} cell;

typedef struct engine {
    bool available;
    char version[64];
    char why[512];               /* when unavailable */
    cell c[NW];
} engine;

/* ---- cella, in process --------------------------------------------------- */

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One run to completion; host calls to f answered with x + 1. Returns 0 and
 * the result JSON (truncated into res), or -1 with why. */
static int cella_run(const workload *w, char *res, size_t rescap, char *why, size_t whycap)
{
    static const char *const fns[] = {"f"};
    code_run_opts o;
    memset(&o, 0, sizeof(o));
    if (w->kind == W_HOST) {
        o.functions = fns;
        o.nfunctions = 1;
    }
    code_run *r;
    code_error err;
    memset(&err, 0, sizeof(err));
    if (code_run_new(w->src, strlen(w->src), &o, &r, &err) < 0) {
        code_error_format(&err, why, whycap);
        return -1;
    }
    code_step st;
    memset(&st, 0, sizeof(st));
    code_run_start(r, &st);
    while (st.kind == CODE_STEP_CALL) {
        size_t n = st.ncalls;
        code_result ans[8];
        char vals[8][32];
        if (n > 8)
            n = 8;
        for (size_t i = 0; i < n; i++) {
            long long x = strtoll(st.calls[i].args_json + 1, NULL, 10);
            snprintf(vals[i], sizeof(vals[i]), "%lld", x + 1);
            ans[i] = (code_result){.call_id = st.calls[i].id, .value_json = vals[i]};
        }
        code_step_clear(&st);
        memset(&st, 0, sizeof(st));
        code_run_resume(r, ans, n, &st);
    }
    int rc = 0;
    if (st.kind == CODE_STEP_COMPLETE) {
        snprintf(res, rescap, "%s", st.result_json ? st.result_json : "null");
    } else {
        code_error_format(&st.error, why, whycap);
        rc = -1;
    }
    code_step_clear(&st);
    code_run_free(r);
    return rc;
}

static void bench_cella(engine *e, int runs)
{
    e->available = true;
    snprintf(e->version, sizeof(e->version), "in process");
    double *t = calloc((size_t)runs, sizeof(double));
    for (size_t i = 0; i < NW; i++) {
        const workload *w = &WORKLOADS[i];
        cell *c = &e->c[i];
        if (cella_run(w, c->result, sizeof(c->result), c->why, sizeof(c->why)) < 0)
            continue;                          /* also the warm-up */
        c->ok = true;
        for (int r = 0; r < runs && c->ok; r++) {
            int n = w->kind == W_TINY ? w->iters : 1;
            double t0 = now_us();
            for (int k = 0; k < n; k++)
                if (cella_run(w, c->result, sizeof(c->result), c->why, sizeof(c->why)) < 0) {
                    c->ok = false;
                    break;
                }
            t[r] = (now_us() - t0) / (w->kind == W_RUN ? 1 : w->iters);
        }
        if (c->ok)
            c->us = median(t, runs);
    }
    free(t);
}

/* ---- the other engines, as child processes ----------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static int write_spec(const char *path, int runs)
{
    static const char *const kinds[] = {"tiny", "run", "host"};
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"runs\": %d, \"workloads\": [", runs);
    for (size_t i = 0; i < NW; i++) {
        fprintf(f, "%s{\"name\": ", i ? ", " : "");
        json_str(f, WORKLOADS[i].name);
        fprintf(f, ", \"kind\": \"%s\", \"iters\": %d, \"src\": ", kinds[WORKLOADS[i].kind],
                WORKLOADS[i].iters);
        json_str(f, WORKLOADS[i].src);
        fputc('}', f);
    }
    fputs("]}\n", f);
    return fclose(f);
}

/* Runs argv (PATH searched) with stdout into a malloc'd string and stderr
 * into errfile; returns the exit status (-1 when it could not start). */
static int capture(char *const argv[], const char *errfile, char **out)
{
    int p[2];
    *out = NULL;
    if (pipe(p) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        errno = rc;
        return -1;
    }
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t n;
    while ((n = read(p[0], buf + len, cap - len - 1)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        len += (size_t)n;
        if (cap - len < 1024)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    close(p[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The last non-empty line of a file, for a failure's reason. */
static void last_line(const char *path, char *dst, size_t cap)
{
    char line[1024] = "";
    FILE *f = fopen(path, "r");
    if (f) {
        char buf[1024];
        while (fgets(buf, sizeof(buf), f))
            if (buf[0] != '\n')
                snprintf(line, sizeof(line), "%s", buf);
        fclose(f);
    }
    line[strcspn(line, "\n")] = 0;
    snprintf(dst, cap, "%s", line[0] ? line : "no message");
}

/* The children print one line per workload, tab-separated:
 *   NAME \t MICROSECONDS \t RESULT-JSON     or     NAME \t ERROR \t MESSAGE
 * and "#version \t V" or "#unavailable \t REASON". */
static void parse_lines(engine *e, char *text)
{
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *f1 = strchr(line, '\t');
        if (!f1)
            continue;
        *f1++ = 0;
        char *f2 = strchr(f1, '\t');
        if (!strcmp(line, "#version")) {
            snprintf(e->version, sizeof(e->version), "%s", f1);
            continue;
        }
        if (!strcmp(line, "#unavailable")) {
            e->available = false;
            snprintf(e->why, sizeof(e->why), "%s", f1);
            return;
        }
        if (!f2)
            continue;
        *f2++ = 0;
        for (size_t i = 0; i < NW; i++)
            if (!strcmp(line, WORKLOADS[i].name)) {
                cell *c = &e->c[i];
                if (!strcmp(f1, "ERROR")) {
                    snprintf(c->why, sizeof(c->why), "%s", f2);
                } else {
                    c->ok = true;
                    c->us = strtod(f1, NULL);
                    snprintf(c->result, sizeof(c->result), "%s", f2);
                }
            }
    }
}

static void bench_child(engine *e, char *const argv[], const char *errfile)
{
    char *out;
    int rc = capture(argv, errfile, &out);
    if (rc < 0) {
        snprintf(e->why, sizeof(e->why), "%s could not start: %s", argv[0], strerror(errno));
        return;
    }
    e->available = true;
    parse_lines(e, out);
    free(out);
    if (e->available && rc != 0) {
        char why[400];
        last_line(errfile, why, sizeof(why));
        e->available = false;
        snprintf(e->why, sizeof(e->why), "%s exited %d: %s", argv[0], rc, why);
    }
}

/* Installs @pydantic/monty into npm_dir unless it is there; returns 0, or -1
 * with the reason. */
static int monty_install(const char *npm_dir, const char *errfile, char *why, size_t cap)
{
    char pkg[1024];
    snprintf(pkg, sizeof(pkg), "%s/node_modules/@pydantic/monty/package.json", npm_dir);
    if (access(pkg, R_OK) == 0)
        return 0;
    mkdir(npm_dir, 0755);
    char *argv[] = {"npm", "install", "--prefix", (char *)npm_dir, "--no-audit", "--no-fund",
                    "--loglevel=error", MONTY_PKG, NULL};
    fprintf(stderr, "bench: npm install %s into %s\n", MONTY_PKG, npm_dir);
    char *out;
    int rc = capture(argv, errfile, &out);
    free(out);
    if (rc != 0 || access(pkg, R_OK) != 0) {
        char line[400];
        if (rc < 0)
            snprintf(line, sizeof(line), "npm could not start: %s", strerror(errno));
        else
            last_line(errfile, line, sizeof(line));
        snprintf(why, cap, "npm install %s failed: %s", MONTY_PKG, line);
        return -1;
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------------ */

static void fmt_time(char *dst, size_t cap, const workload *w, const cell *c)
{
    if (!c->ok)
        snprintf(dst, cap, "—");
    else if (w->kind == W_RUN)
        snprintf(dst, cap, "%.2f ms", c->us / 1000);
    else
        snprintf(dst, cap, "%.2f µs", c->us);
}

static void fmt_ratio(char *dst, size_t cap, const cell *a, const cell *b)
{
    if (a->ok && b->ok && b->us > 0)
        snprintf(dst, cap, "%.2f", a->us / b->us);
    else
        snprintf(dst, cap, "—");
}

/* Results as JSON texts, compared without their spaces. */
static bool same_result(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ')
            a++;
        while (*b == ' ')
            b++;
        if (*a != *b)
            return false;
        if (!*a)
            return true;
        a++, b++;
    }
}

static size_t report(char *buf, size_t cap, engine *e, int runs)
{
    size_t off = 0;
#define OUT(...) off += (size_t)snprintf(buf + off, off < cap ? cap - off : 0, __VA_ARGS__)
    struct utsname u;
    uname(&u);
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
    /* Not interleaved like the other benches: each engine runs its workloads
     * in turn (two of them in their own processes). */
    OUT("Measured %s on Linux %s, %ld CPUs, the median of %d runs of each workload, one "
        "engine after the other (`make bench`).\n\n",
        date, u.release, sysconf(_SC_NPROCESSORS_ONLN), runs);
    OUT("| workload | cella | CPython %s | Monty %s | cella/CPython | cella/Monty |\n"
        "|---|---:|---:|---:|---:|---:|\n",
        e[E_PY].available ? e[E_PY].version : "", e[E_MONTY].available ? e[E_MONTY].version : "");
    for (size_t i = 0; i < NW; i++) {
        const workload *w = &WORKLOADS[i];
        char t[NE][32], r1[16], r2[16];
        for (int k = 0; k < NE; k++)
            fmt_time(t[k], sizeof(t[k]), w, &e[k].c[i]);
        fmt_ratio(r1, sizeof(r1), &e[E_CELLA].c[i], &e[E_PY].c[i]);
        fmt_ratio(r2, sizeof(r2), &e[E_CELLA].c[i], &e[E_MONTY].c[i]);
        OUT("| %s | %s | %s | %s | %s | %s |\n", w->name, t[0], t[1], t[2], r1, r2);
    }
    OUT("\nTimes are medians of whole runs, compilation included (per run for the first row, "
        "per call for the last); CPython's host call is a plain Python call, the floor no "
        "pausing interpreter can reach.\n");
    /* An aim counts only for a run whose result is CPython's. */
    bool right[NW];
    for (size_t i = 0; i < NW; i++)
        right[i] = e[E_CELLA].c[i].ok &&
                   (!e[E_PY].c[i].ok || same_result(e[E_CELLA].c[i].result, e[E_PY].c[i].result));
    const cell *tiny = &e[E_CELLA].c[0], *fib = &e[E_CELLA].c[1], *loop = &e[E_CELLA].c[2];
    if (tiny->ok)
        OUT("- start+run aim (<= 5 µs): %.2f µs, %s\n", tiny->us,
            !right[0] ? "wrong result" : tiny->us <= 5 ? "met" : "NOT met");
    if (fib->ok && e[E_PY].c[1].ok)
        OUT("- fib(25) aim (no slower than CPython): %s\n",
            !right[1] ? "wrong result" : fib->us <= e[E_PY].c[1].us ? "met" : "NOT met");
    if (loop->ok && e[E_PY].c[2].ok)
        OUT("- loop aim (no slower than CPython): %s\n",
            !right[2] ? "wrong result" : loop->us <= e[E_PY].c[2].us ? "met" : "NOT met");
    for (int k = 0; k < NE; k++) {
        if (!e[k].available) {
            OUT("- %s: unavailable: %s\n", ENGINE[k], e[k].why);
            continue;
        }
        for (size_t i = 0; i < NW; i++) {
            const cell *c = &e[k].c[i];
            if (!c->ok)
                OUT("- %s, %s: failed: %s\n", ENGINE[k], WORKLOADS[i].name, c->why);
            else if (k != E_PY && e[E_PY].c[i].ok && !same_result(c->result, e[E_PY].c[i].result))
                OUT("- %s, %s: result %s differs from CPython's %s\n", ENGINE[k],
                    WORKLOADS[i].name, c->result, e[E_PY].c[i].result);
        }
    }
#undef OUT
    return off;
}

int main(int argc, char **argv)
{
    const char *python = "/usr/bin/python3", *node = "node", *npm_dir = BENCH_NPM_DIR;
    const char *out = NULL;
    int runs = 7;
    bool monty = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            runs = 3;
        else if (!strcmp(argv[i], "--python") && i + 1 < argc)
            python = argv[++i];
        else if (!strcmp(argv[i], "--node") && i + 1 < argc)
            node = argv[++i];
        else if (!strcmp(argv[i], "--npm-dir") && i + 1 < argc)
            npm_dir = argv[++i];
        else if (!strcmp(argv[i], "--no-monty"))
            monty = false;
        else if (!strcmp(argv[i], "--write") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--runs N] [--quick] [--python PATH] [--node PATH] "
                    "[--npm-dir DIR] [--no-monty] [--write FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    char tmp[] = "/tmp/cella-bench-code-XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    char spec[512], errfile[512];
    snprintf(spec, sizeof(spec), "%s/workloads.json", tmp);
    snprintf(errfile, sizeof(errfile), "%s/stderr", tmp);
    if (write_spec(spec, runs) < 0) {
        perror(spec);
        return 1;
    }
    static engine e[NE];
    bench_cella(&e[E_CELLA], runs);

    char py_script[512], js_script[512];
    snprintf(py_script, sizeof(py_script), "%s/code_py.py", BENCH_SRC_DIR);
    snprintf(js_script, sizeof(js_script), "%s/code_monty.mjs", BENCH_SRC_DIR);
    char *py_argv[] = {(char *)python, py_script, spec, NULL};
    bench_child(&e[E_PY], py_argv, errfile);

    if (!monty)
        snprintf(e[E_MONTY].why, sizeof(e[E_MONTY].why), "left out (--no-monty)");
    else if (monty_install(npm_dir, errfile, e[E_MONTY].why, sizeof(e[E_MONTY].why)) == 0) {
        char *js_argv[] = {(char *)node, js_script, (char *)npm_dir, spec, NULL};
        bench_child(&e[E_MONTY], js_argv, errfile);
    }
    unlink(spec);
    unlink(errfile);
    rmdir(tmp);

    char block[16384];
    report(block, sizeof(block), e, runs);
    fputs(block, stdout);
    if (out && write_block(out, BEGIN_MARK, END_MARK, block) < 0) {
        perror(out);
        return 1;
    }
    return 0;
}
