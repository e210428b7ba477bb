/* cella-bench-daemon: the daemon's costs, each against a reference measured in
 * the same run.
 *
 *   (a) exec of /bin/true in a live sandbox over HTTP  vs  fork+exec of /bin/true
 *   (b) create (POST /v1/sandboxes)                    vs  bubblewrap running /bin/true
 *   (c) one-shot python print(1) via POST /v1/run      vs  python3 -c 'print(1)'
 *   (d) one-shot runs per second, 8 concurrent clients vs  the same 8 clients running python3 bare
 *   (e) memory per idle sandbox with 500 of them live (MemAvailable before and after)
 *
 *   cella-bench-daemon [--cella PATH] [--bwrap PATH] [--runs N] [--idle N] [--write FILE]
 *
 * The daemon is started here, on a free loopback port with a throwaway state
 * directory, and stopped at the end. HTTP is spoken over one keep-alive
 * connection per client, as a real client would. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_http.h"
#include "bench_util.h"

#define BEGIN_MARK "<!-- bench:daemon:begin -->"
#define END_MARK "<!-- bench:daemon:end -->"
#define CLIENTS 8

/* ---- (d) throughput ---------------------------------------------------------- */

typedef struct tput {
    bool bare;
    int runs;
    double until;
} tput;

static void *tput_main(void *arg)
{
    tput *t = arg;
    int fd = t->bare ? -1 : http_connect();
    char *py[] = {"/usr/bin/python3", "-c", "print(1)", NULL};
    char body[4096];
    while (now_ms() < t->until) {
        if (t->bare) {
            long rss;
            if (run_once(py, &rss) < 0)
                exit(1);
        } else {
            int st = http_call(fd, "POST", "/v1/run",
                               "{\"image\":\"python\",\"lang\":\"python\",\"code\":\"print(1)\"}",
                               body, sizeof(body));
            must(st, 200, "run", body);
        }
        t->runs++;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static double throughput(bool bare, double secs)
{
    tput t[CLIENTS];
    pthread_t th[CLIENTS];
    double t0 = now_ms();
    for (int i = 0; i < CLIENTS; i++) {
        t[i] = (tput){.bare = bare, .until = t0 + secs * 1000};
        pthread_create(&th[i], NULL, tput_main, &t[i]);
    }
    int total = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(th[i], NULL);
        total += t[i].runs;
    }
    return total / ((now_ms() - t0) / 1000);
}

/* ---- (e) memory ---------------------------------------------------------------- */

static long mem_available_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %ld kB", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

typedef struct series {
    const char *name;
    double *ms;
} series;

static void row(char *block, size_t *off, size_t cap, series *s, int runs, double base)
{
    qsort(s->ms, (size_t)runs, sizeof(double), cmp_double);
    double med = pct(s->ms, runs, 0.5);
    *off += (size_t)snprintf(block + *off, cap - *off, "| %s | %.3f | %.3f | %.2f |\n", s->name, med,
                             pct(s->ms, runs, 0.9), base > 0 ? med / base : 1.0);
}

int main(int argc, char **argv)
{
    const char *cella = "./build/cella", *bwrap = "/usr/bin/bwrap", *out = NULL;
    int runs = 200, idle = 500;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cella") && i + 1 < argc)
            cella = argv[++i];
        else if (!strcmp(argv[i], "--bwrap") && i + 1 < argc)
            bwrap = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--idle") && i + 1 < argc)
            idle = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--write") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--cella PATH] [--bwrap PATH] [--runs N] [--idle N] "
                            "[--write FILE]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 5)
        runs = 5;
    if (access(bwrap, X_OK) < 0) {
        fprintf(stderr, "bench: bubblewrap is needed for (b): %s not found\n", bwrap);
        return 1;
    }
    char cfg[128], ws[128];
    snprintf(cfg, sizeof(cfg), "max_concurrent_sandboxes: %d\npool_size: 4\n", idle + 16);
    bench_daemon d;
    bench_daemon_start(&d, "daemon", cella, cfg);
    snprintf(ws, sizeof(ws), "%s/ws", d.dir);
    mkdir(ws, 0755);
    int fd = http_connect();
    char body[1 << 16], id[64], path[128];

    /* (a) exec of /bin/true in a live sandbox, against fork+exec of it. */
    must(http_call(fd, "POST", "/v1/sandboxes", "{\"image\":\"shell\"}", body, sizeof(body)), 201,
         "create", body);
    json_field(body, "sandbox_id", id, sizeof(id));
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/exec", id);
    char *cmd_true[] = {"/bin/true", NULL};
    series bare_true = {"fork+exec `/bin/true`", calloc((size_t)runs, sizeof(double))};
    series exec_true = {"exec `/bin/true` over HTTP", calloc((size_t)runs, sizeof(double))};
    for (int r = -10; r < runs; r++) {
        long rss;
        double t0 = now_ms();
        if (run_once(cmd_true, &rss) < 0)
            return 1;
        double t1 = now_ms();
        must(http_call(fd, "POST", path, "{\"argv\":[\"/bin/true\"]}", body, sizeof(body)), 200,
             "exec", body);
        double t2 = now_ms();
        if (r >= 0) {
            bare_true.ms[r] = t1 - t0;
            exec_true.ms[r] = t2 - t1;
        }
    }
    snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
    http_call(fd, "DELETE", path, NULL, body, sizeof(body));

    /* (b) create, against bubblewrap's start; creates come 50 a second, as
     * the pool (4 warm sandboxes) would see under a steady load. */
    char *bw[MAX_ARGS];
    bwrap_argv(bw, bwrap, ws, cmd_true);
    series s_bwrap = {"bubblewrap: start, run `/bin/true`, exit", calloc((size_t)runs, sizeof(double))};
    series s_create = {"`POST /v1/sandboxes`", calloc((size_t)runs, sizeof(double))};
    for (int r = -5; r < runs; r++) {
        long rss;
        double t0 = now_ms();
        if (run_once(bw, &rss) < 0) {
            fprintf(stderr, "bench: bubblewrap failed\n");
            return 1;
        }
        double t1 = now_ms();
        must(http_call(fd, "POST", "/v1/sandboxes", "{\"image\":\"shell\"}", body, sizeof(body)),
             201, "create", body);
        double t2 = now_ms();
        json_field(body, "sandbox_id", id, sizeof(id));
        snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
        http_call(fd, "DELETE", path, NULL, body, sizeof(body));
        if (r >= 0) {
            s_bwrap.ms[r] = t1 - t0;
            s_create.ms[r] = t2 - t1;
        }
        double spent = now_ms() - t0;
        if (spent < 20)
            usleep((useconds_t)((20 - spent) * 1000));
    }

    /* (c) one-shot python, against bare python, one pair every pace_c ms
     * (CELLA_BENCH_PACE_MS; default 30): the run's teardown and the pool's
     * refill then overlap the next pair, as under a steady load. */
    double pace_c = getenv("CELLA_BENCH_PACE_MS") ? atof(getenv("CELLA_BENCH_PACE_MS")) : 30;
    char *py[] = {"/usr/bin/python3", "-c", "print(1)", NULL};
    series s_py = {"`python3 -c 'print(1)'`", calloc((size_t)runs, sizeof(double))};
    series s_run = {"`POST /v1/run` python `print(1)`", calloc((size_t)runs, sizeof(double))};
    for (int r = -5; r < runs; r++) {
        long rss;
        double t0 = now_ms();
        if (run_once(py, &rss) < 0)
            return 1;
        double t1 = now_ms();
        must(http_call(fd, "POST", "/v1/run",
                       "{\"image\":\"python\",\"lang\":\"python\",\"code\":\"print(1)\"}", body,
                       sizeof(body)),
             200, "run", body);
        double t2 = now_ms();
        if (r >= 0) {
            s_py.ms[r] = t1 - t0;
            s_run.ms[r] = t2 - t1;
        }
        double spent = now_ms() - t0;
        if (spent < pace_c)
            usleep((useconds_t)((pace_c - spent) * 1000));
    }

    /* (d) throughput with 8 concurrent clients. */
    double tp_bare = throughput(true, 5), tp_run = throughput(false, 5);

    /* (e) memory per idle sandbox. */
    sleep(1);
    long before = mem_available_kb();
    for (int i = 0; i < idle; i++)
        must(http_call(fd, "POST", "/v1/sandboxes", "{\"image\":\"shell\"}", body, sizeof(body)),
             201, "create (idle)", body);
    sleep(2);
    long after = mem_available_kb();
    double per_kib = (double)(before - after) / idle;
    close(fd);
    bench_daemon_stop(&d);

    char block[8192];
    size_t off = bench_header(block, sizeof(block), runs);
    off += (size_t)snprintf(block + off, sizeof(block) - off,
                            "| what | median ms | p90 ms | ratio |\n|---|---:|---:|---:|\n");
    series *all[] = {&bare_true, &exec_true, &s_bwrap, &s_create, &s_py, &s_run};
    for (int i = 0; i < 6; i += 2) {
        row(block, &off, sizeof(block), all[i], runs, 0);
        double base = pct(all[i]->ms, runs, 0.5);
        row(block, &off, sizeof(block), all[i + 1], runs, base);
    }
    off += (size_t)snprintf(block + off, sizeof(block) - off,
                            "\n- (a) exec over HTTP / fork+exec: **%.2fx** (aim <= 1.5x)\n"
                            "- (b) create / bubblewrap start: **%.2fx** (aim <= 0.25x)\n"
                            "- (c) `/v1/run` / bare python: **%.2fx** (aim <= 1.2x)\n"
                            "- (d) one-shot runs with %d concurrent clients: **%.0f/s** through "
                            "`/v1/run`, against %.0f/s of bare `python3 -c 'print(1)'` by the same "
                            "clients (%.2fx)\n"
                            "- (e) memory per idle sandbox, %d live: **%.0f KiB** (MemAvailable "
                            "before and after; aim <= 1 MiB)\n",
                            pct(exec_true.ms, runs, .5) / pct(bare_true.ms, runs, .5),
                            pct(s_create.ms, runs, .5) / pct(s_bwrap.ms, runs, .5),
                            pct(s_run.ms, runs, .5) / pct(s_py.ms, runs, .5), CLIENTS, tp_run,
                            tp_bare, tp_run / tp_bare, idle, per_kib);
    fputs(block, stdout);
    if (out && write_block(out, BEGIN_MARK, END_MARK, block) < 0) {
        perror(out);
        return 1;
    }
    return 0;
}
