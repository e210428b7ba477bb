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
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define BEGIN_MARK "<!-- bench:daemon:begin -->"
#define END_MARK "<!-- bench:daemon:end -->"
#define CLIENTS 8

extern char **environ;

static int port;

/* ---- a minimal keep-alive HTTP client ------------------------------------- */

static int http_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        perror("connect");
        exit(1);
    }
    return fd;
}

/* Sends one request and reads the answer (Content-Length bodies only, which
 * is what the daemon sends for JSON). Returns the status; body (may be NULL)
 * gets up to cap-1 bytes. */
static int http_call(int fd, const char *method, const char *path, const char *body, char *out,
                     size_t cap)
{
    char req[8192];
    int n = snprintf(req, sizeof(req),
                     "%s %s HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     method, path, body ? strlen(body) : 0, body ? body : "");
    if (write(fd, req, (size_t)n) != n) {
        perror("write");
        exit(1);
    }
    static __thread char buf[1 << 20];
    size_t got = 0;
    char *hdr_end = NULL;
    long clen = -1;
    for (;;) {
        ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);
        if (r <= 0) {
            fprintf(stderr, "bench: the daemon closed the connection\n");
            exit(1);
        }
        got += (size_t)r;
        buf[got] = '\0';
        if (!hdr_end && (hdr_end = strstr(buf, "\r\n\r\n"))) {
            char *cl = strcasestr(buf, "Content-Length:");
            clen = cl && cl < hdr_end ? atol(cl + 15) : 0;
        }
        if (hdr_end && got >= (size_t)(hdr_end + 4 - buf) + (size_t)clen)
            break;
    }
    int status = atoi(buf + 9);
    if (out) {
        size_t bl = (size_t)clen < cap - 1 ? (size_t)clen : cap - 1;
        memcpy(out, hdr_end + 4, bl);
        out[bl] = '\0';
    }
    return status;
}

static void json_field(const char *json, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":\"", key);
    const char *p = strstr(json, pat);
    out[0] = '\0';
    if (p) {
        p += strlen(pat);
        size_t n = strcspn(p, "\"");
        snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
    }
}

static void must(int status, int want, const char *what, const char *body)
{
    if (status != want) {
        fprintf(stderr, "bench: %s answered %d: %s\n", what, status, body);
        exit(1);
    }
}

/* ---- the daemon ------------------------------------------------------------- */

static pid_t start_daemon(const char *cella, const char *state, const char *cfg, const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)cella, "serve", "--listen", "127.0.0.1:0", "--state-dir",
                    (char *)state, "--config", (char *)cfg, NULL};
    pid_t pid;
    if (posix_spawn(&pid, cella, &fa, NULL, argv, environ) != 0) {
        perror("spawn cella serve");
        exit(1);
    }
    posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 2000 && !port; i++) {
        usleep(5000);
        FILE *f = fopen(log, "r");
        char line[512];
        while (f && fgets(line, sizeof(line), f)) {
            char *a = strstr(line, "addr=127.0.0.1:");
            if (a)
                port = atoi(a + 15);
        }
        if (f)
            fclose(f);
    }
    if (!port) {
        fprintf(stderr, "bench: cella serve did not start (see %s)\n", log);
        exit(1);
    }
    int fd = http_connect();
    char body[256];
    while (http_call(fd, "GET", "/readyz", NULL, body, sizeof(body)) != 200)
        usleep(10000);
    close(fd);
    return pid;
}

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
    char dir[] = "/tmp/cella-bench-daemon-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char state[256], cfg[256], log[256], ws[256];
    snprintf(state, sizeof(state), "%s/state", dir);
    snprintf(cfg, sizeof(cfg), "%s/cella.yaml", dir);
    snprintf(log, sizeof(log), "%s/serve.log", dir);
    snprintf(ws, sizeof(ws), "%s/ws", dir);
    mkdir(ws, 0755);
    FILE *cf = fopen(cfg, "w");
    fprintf(cf, "max_concurrent_sandboxes: %d\npool_size: 4\n", idle + 16);
    fclose(cf);
    pid_t daemon = start_daemon(cella, state, cfg, log);
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
    kill(daemon, SIGTERM);
    int status;
    waitpid(daemon, &status, 0);

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
    char rm[300];
    snprintf(rm, sizeof(rm), "rm -rf %s", dir);
    if (system(rm) != 0)
        fprintf(stderr, "bench: could not remove %s\n", dir);
    if (out && write_block(out, BEGIN_MARK, END_MARK, block) < 0) {
        perror(out);
        return 1;
    }
    return 0;
}
