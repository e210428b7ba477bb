/* cella-bench-files: the file API's costs, each against a reference measured
 * in the same run, on the same disk, interleaved round by round.
 *
 *   (a) PUT .../files/workspace/big, 256 MiB streamed    vs  cp host file -> state dir
 *   (b) GET .../files/workspace/big into a host file     vs  cp state dir -> host file
 *   (c) the daemon's peak RSS during (a) and (b)         vs  its RSS before them
 *   (d) POST .../fs/grep over a 10,000-file tree          vs  grep -rn over the same tree
 *                                                             on the host
 *
 *   cella-bench-files [--cella PATH] [--runs N] [--size-mib N] [--write FILE]
 *
 * The host's files live in the daemon's throwaway directory, beside its state
 * directory (and so the workspaces): both sides of every pair read and write
 * the same disk, and the ratios compare what cella adds, not two disks. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_http.h"
#include "bench_util.h"

#define BEGIN_MARK "<!-- bench:files:begin -->"
#define END_MARK "<!-- bench:files:end -->"
/* Valid and alike as a GNU grep basic regex and as PCRE2: both sides search
 * for the same thing. */
#define PATTERN "needle [0-9]"
#define TREE_FILES 10000

extern char **environ;

/* 100 directories of 100 files of 40 lines, one line in each matching
 * PATTERN; run once inside the sandbox and once on the host, so that the two
 * trees are the same bytes. argv[1] is the tree's root. */
static const char tree_py[] =
    "import os, sys\n"
    "root = sys.argv[1]\n"
    "for d in range(100):\n"
    "    dd = os.path.join(root, 'd%02d' % d)\n"
    "    os.makedirs(dd)\n"
    "    for f in range(100):\n"
    "        lines = ['line %d of file %d/%d: lorem ipsum dolor sit amet, consectetur\\n'\n"
    "                 % (i, d, f) for i in range(40)]\n"
    "        lines[17] = 'the needle %d %d is here\\n' % (d, f)\n"
    "        with open(os.path.join(dd, 'f%02d.txt' % f), 'w') as o:\n"
    "            o.write(''.join(lines))\n";

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* ---- files -------------------------------------------------------------------------- */

/* size bytes of xorshift output, written 1 MiB at a time: not zeros, so no
 * layer can take a shortcut over them, and never the whole file in memory. */
static void make_source(const char *path, uint64_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die(path);
    static uint64_t buf[(1 << 20) / 8];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint64_t done = 0; done < size; done += sizeof(buf)) {
        for (size_t i = 0; i < sizeof(buf) / 8; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[i] = x;
        }
        size_t n = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);
        if (write(fd, buf, n) != (ssize_t)n)
            die(path);
    }
    if (fsync(fd) < 0 || close(fd) < 0)
        die(path);
}

static void unlink_if(const char *path)
{
    if (unlink(path) < 0 && errno != ENOENT)
        die(path);
}

/* Runs argv to success, timed; exits when it fails. */
static double timed(char *const argv[])
{
    long rss;
    double ms = run_once(argv, &rss);
    if (ms < 0) {
        fprintf(stderr, "bench: %s %s failed\n", argv[0], argv[1]);
        exit(1);
    }
    return ms;
}

/* ---- the daemon's memory ------------------------------------------------------------ */

/* A /proc/PID/status field in KiB ("VmRSS:", "VmHWM:"), -1 when unreadable. */
static long status_kb(pid_t pid, const char *key)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    return proc_field_kb(path, key);
}

typedef struct sampler {
    pid_t pid;
    atomic_bool stop;
    atomic_long peak_kb; /* since the last peak_take */
    long samples;
    bool hwm; /* VmHWM was reset by the last peak_start */
} sampler;

/* VmRSS every 2 ms while the transfers run: a window that grew with the file
 * would show here as a climb. VmHWM, reset before each transfer, catches a
 * peak shorter than the period. */
static void *sample_main(void *arg)
{
    sampler *s = arg;
    while (!atomic_load(&s->stop)) {
        long v = status_kb(s->pid, "VmRSS:"), p = atomic_load(&s->peak_kb);
        while (v > p && !atomic_compare_exchange_weak(&s->peak_kb, &p, v))
            ;
        s->samples++;
        usleep(2000);
    }
    return NULL;
}

/* Resets VmHWM to the current RSS ("5" to clear_refs, proc(5)); false where
 * the kernel does not have it, and then only the samples count. */
static bool hwm_reset(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && write(fd, "5", 1) == 1;
    if (fd >= 0)
        close(fd);
    return ok;
}

static void peak_start(sampler *s)
{
    s->hwm = hwm_reset(s->pid);
    atomic_store(&s->peak_kb, status_kb(s->pid, "VmRSS:"));
}

/* The peak since peak_start: the larger of the samples and VmHWM. */
static long peak_take(sampler *s)
{
    long p = atomic_load(&s->peak_kb), hwm = s->hwm ? status_kb(s->pid, "VmHWM:") : -1;
    return p > hwm ? p : hwm;
}

/* ---- grep ---------------------------------------------------------------------------- */

/* GNU grep notices a stdout on /dev/null and stops at the first match, so
 * the reference writes its matches into a pipe that is read and counted here,
 * as the daemon reads the sandbox's answer. */
static double host_grep(const char *dir, long *matches)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        die("pipe2");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"/usr/bin/grep", "-rn", PATTERN, (char *)dir, NULL};
    double t0 = now_ms();
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
        die("spawn grep");
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    static char buf[1 << 16];
    ssize_t r;
    *matches = 0;
    while ((r = read(p[0], buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
        for (ssize_t i = 0; i < r; i++)
            *matches += buf[i] == '\n';
    close(p[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    double ms = now_ms() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench: grep -rn on the host failed\n");
        exit(1);
    }
    return ms;
}

static long count_of(const char *hay, const char *needle)
{
    long n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* s as a JSON string, quotes included. */
static void json_string(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    out[o++] = '"';
    for (; *s && o + 3 < cap; s++) {
        if (*s == '"' || *s == '\\') {
            out[o++] = '\\';
            out[o++] = *s;
        } else if (*s == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *s;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
}

/* ---- the report ------------------------------------------------------------------------ */

static double *times(int n)
{
    double *v = calloc((size_t)n, sizeof(double));
    if (!v)
        die("calloc");
    return v;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return pct(v, n, 0.5);
}

static size_t row(char *b, size_t off, size_t cap, const char *what, double ms, double bytes,
                  double base)
{
    char rate[32] = "";
    if (bytes > 0)
        snprintf(rate, sizeof(rate), "%.0f", bytes / 1e6 / (ms / 1e3));
    int w = snprintf(b + off, cap - off, "| %s | %.1f | %s | %.2f |\n", what, ms, rate, ms / base);
    return off + (w > 0 ? (size_t)w : 0);
}

int main(int argc, char **argv)
{
    const char *cella = "./build/cella", *out = NULL;
    int runs = 5, size_mib = 256;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cella") && i + 1 < argc)
            cella = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size-mib") && i + 1 < argc)
            size_mib = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--write") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--cella PATH] [--runs N] [--size-mib N] [--write FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    if (size_mib < 1)
        size_mib = 1;
    uint64_t size = (uint64_t)size_mib << 20;
    /* A daemon that answers early and hangs up must not kill the bench. */
    signal(SIGPIPE, SIG_IGN);

    bench_daemon d;
    bench_daemon_start(&d, "files", cella, "pool_size: 1\n");
    int fd = http_connect();
    char body[1 << 16], id[64], path[256];
    must(http_call(fd, "POST", "/v1/sandboxes", "{\"image\":\"python\"}", body, sizeof(body)),
         201, "create", body);
    json_field(body, "sandbox_id", id, sizeof(id));

    char src[128], cp_up[160], ws_big[256], down_cp[128], down_cella[128], host_tree[128];
    snprintf(src, sizeof(src), "%s/source", d.dir);
    snprintf(cp_up, sizeof(cp_up), "%s/cp-copy", d.state);
    snprintf(ws_big, sizeof(ws_big), "%s/workspaces/%s/big", d.state, id);
    snprintf(down_cp, sizeof(down_cp), "%s/down-cp", d.dir);
    snprintf(down_cella, sizeof(down_cella), "%s/down-cella", d.dir);
    snprintf(host_tree, sizeof(host_tree), "%s/tree", d.dir);
    fprintf(stderr, "bench: writing the %d MiB source file\n", size_mib);
    make_source(src, size);
    int src_fd = open(src, O_RDONLY | O_CLOEXEC);
    if (src_fd < 0)
        die(src);
    char files_url[160];
    snprintf(files_url, sizeof(files_url), "/v1/sandboxes/%s/files/workspace/big", id);

    /* (a)-(c): one unmeasured round first, to fault in code paths and caches
     * on both sides; it also checks that the bytes arrive whole. */
    double *up_cp = times(runs), *up_sync = times(runs), *up_cella = times(runs);
    double *dn_cp = times(runs), *dn_cella = times(runs);
    sleep(1);
    long rss_before = status_kb(d.pid, "VmRSS:"), rss_warm = 0, peak_up = 0, peak_dn = 0;
    sampler smp = {.pid = d.pid};
    pthread_t sth;
    pthread_create(&sth, NULL, sample_main, &smp);
    for (int r = -1; r < runs; r++) {
        fprintf(stderr, "bench: transfers, round %d of %d\n", r + 1, runs);
        /* Each step starts with nothing dirty, so that no step pays for the
         * write-back of the one before it. */
        sync();
        char *cp1[] = {"/usr/bin/cp", src, cp_up, NULL};
        char *sy[] = {"/usr/bin/sync", cp_up, NULL};
        double t_cp = timed(cp1), t_sync = timed(sy);
        unlink_if(cp_up);
        sync();
        peak_start(&smp);
        double t0 = now_ms();
        int st = http_put_file(fd, files_url, src_fd, size, body, sizeof(body));
        double t_up = now_ms() - t0;
        long pk = peak_take(&smp);
        peak_up = pk > peak_up ? pk : peak_up;
        must(st, 200, "PUT files/workspace/big", body);
        sync();
        char *cp2[] = {"/usr/bin/cp", ws_big, down_cp, NULL};
        double t_dcp = timed(cp2);
        unlink_if(down_cp);
        sync();
        peak_start(&smp);
        t0 = now_ms();
        int dst = open(down_cella, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (dst < 0)
            die(down_cella);
        uint64_t got;
        st = http_get_file(fd, files_url, dst, &got);
        close(dst);
        double t_dn = now_ms() - t0;
        pk = peak_take(&smp);
        peak_dn = pk > peak_dn ? pk : peak_dn;
        if (st != 200 || got != size) {
            fprintf(stderr, "bench: GET files/workspace/big answered %d with %llu bytes\n", st,
                    (unsigned long long)got);
            return 1;
        }
        if (r < 0) {
            rss_warm = status_kb(d.pid, "VmRSS:");
            char *c1[] = {"/usr/bin/cmp", "-s", src, ws_big, NULL};
            char *c2[] = {"/usr/bin/cmp", "-s", src, down_cella, NULL};
            timed(c1);
            timed(c2);
        } else {
            up_cp[r] = t_cp;
            up_sync[r] = t_cp + t_sync;
            up_cella[r] = t_up;
            dn_cp[r] = t_dcp;
            dn_cella[r] = t_dn;
        }
        unlink_if(down_cella);
        /* Dropped on the host, as the cp copies are: the next PUT then
         * creates the file rather than replacing it, as the cp does. */
        unlink_if(ws_big);
    }
    atomic_store(&smp.stop, true);
    pthread_join(sth, NULL);
    long rss_after = status_kb(d.pid, "VmRSS:");
    close(src_fd);

    /* (d) grep: the tree made by one exec inside, and by the same script on
     * the host. */
    fprintf(stderr, "bench: making the two %d-file trees\n", TREE_FILES);
    char script[2048], req[4096];
    json_string(script, sizeof(script), tree_py);
    snprintf(req, sizeof(req),
             "{\"argv\":[\"/usr/bin/python3\",\"-c\",%s,\"/workspace/tree\"],"
             "\"timeout_ms\":600000}",
             script);
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/exec", id);
    must(http_call(fd, "POST", path, req, body, sizeof(body)), 200, "exec (tree)", body);
    if (!strstr(body, "\"exit_code\":0")) {
        fprintf(stderr, "bench: making the tree in the sandbox failed: %s\n", body);
        return 1;
    }
    char *mk[] = {"/usr/bin/python3", "-c", (char *)tree_py, host_tree, NULL};
    timed(mk);
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/fs/grep", id);
    const char *greq = "{\"path\":\"/workspace/tree\",\"pattern\":\"" PATTERN "\","
                       "\"max_matches\":100000}";
    double *g_host = times(runs), *g_cella = times(runs);
    long m_host = 0, m_cella = 0;
    char grep_err[512] = "";
    for (int r = -1; r < runs && !grep_err[0]; r++) {
        fprintf(stderr, "bench: grep, round %d of %d\n", r + 1, runs);
        double t_host = host_grep(host_tree, &m_host);
        char *ans;
        size_t alen;
        double t0 = now_ms();
        int st = http_call_alloc(fd, "POST", path, greq, &ans, &alen);
        double t_cella = now_ms() - t0;
        if (st != 200) {
            /* Reported, not fatal: the transfer figures still stand. */
            char code[16], msg[400];
            json_field(ans, "code", code, sizeof(code));
            json_field(ans, "message", msg, sizeof(msg));
            snprintf(grep_err, sizeof(grep_err), "HTTP %d, %s: %s", st, code, msg);
        } else {
            m_cella = count_of(ans, "\"line\":");
            if (!strstr(ans, "\"truncated\":false")) {
                fprintf(stderr, "bench: the grep answer was truncated\n");
                return 1;
            }
            if (r >= 0) {
                g_host[r] = t_host;
                g_cella[r] = t_cella;
            }
        }
        free(ans);
    }
    close(fd);
    bench_daemon_stop(&d);
    if (!grep_err[0] && (m_host != m_cella || m_host != TREE_FILES)) {
        fprintf(stderr, "bench: grep found %ld matches on the host and %ld in the sandbox; "
                        "%d expected\n", m_host, m_cella, TREE_FILES);
        return 1;
    }

    double mu_cp = median(up_cp, runs), mu_sync = median(up_sync, runs);
    double mu_cella = median(up_cella, runs), md_cp = median(dn_cp, runs);
    double md_cella = median(dn_cella, runs);
    char block[8192], what[160];
    size_t off = bench_header(block, sizeof(block), runs);
    off += (size_t)snprintf(block + off, sizeof(block) - off,
                            "| what | median ms | MB/s | ratio |\n|---|---:|---:|---:|\n");
    snprintf(what, sizeof(what), "`cp` host file -> state dir, %d MiB", size_mib);
    off = row(block, off, sizeof(block), what, mu_cp, (double)size, mu_cp);
    off = row(block, off, sizeof(block), "`cp`, then `sync` of the copy", mu_sync, (double)size,
              mu_cp);
    snprintf(what, sizeof(what), "`PUT .../files/workspace/big`, %d MiB", size_mib);
    off = row(block, off, sizeof(block), what, mu_cella, (double)size, mu_cp);
    off = row(block, off, sizeof(block), "`cp` workspace file -> host file", md_cp, (double)size,
              md_cp);
    off = row(block, off, sizeof(block), "`GET .../files/workspace/big` -> host file", md_cella,
              (double)size, md_cp);
    double mg_host = 0, mg_cella = 0;
    if (!grep_err[0]) {
        mg_host = median(g_host, runs);
        mg_cella = median(g_cella, runs);
        off = row(block, off, sizeof(block),
                  "`grep -rn '" PATTERN "'` over 10,000 files on the host", mg_host, 0, mg_host);
        off = row(block, off, sizeof(block), "`POST .../fs/grep`, the same tree in the sandbox",
                  mg_cella, 0, mg_host);
    }
    off += (size_t)snprintf(
        block + off, sizeof(block) - off,
        "\n- (a) upload / `cp`: **%.2fx** (%.2fx of `cp` followed by `sync` of the copy: the "
        "upload fsyncs the file before it renames it into place)\n"
        "- (b) download / `cp`: **%.2fx**\n"
        "- (c) the daemon's RSS: **%.1f MiB before; at the peak %.1f MiB during the uploads "
        "(%+.1f MiB) and %.1f MiB during the downloads (%+.1f MiB)**; %.1f MiB after the "
        "first round, %.1f MiB after the last (VmRSS every 2 ms, %ld samples, and VmHWM reset "
        "before each of the %d transfers)\n",
        mu_cella / mu_cp, mu_cella / mu_sync, md_cella / md_cp, rss_before / 1024.0,
        peak_up / 1024.0, (peak_up - rss_before) / 1024.0, peak_dn / 1024.0,
        (peak_dn - rss_before) / 1024.0, rss_warm / 1024.0, rss_after / 1024.0, smp.samples,
        2 * (runs + 1));
    if (grep_err[0])
        off += (size_t)snprintf(block + off, sizeof(block) - off,
                                "- (d) grep: **not measured**, the daemon answered %s\n", grep_err);
    else
        off += (size_t)snprintf(block + off, sizeof(block) - off,
                                "- (d) grep / host `grep -rn`: **%.2fx**, %ld matches on each "
                                "side\n", mg_cella / mg_host, m_cella);
    fputs(block, stdout);
    if (out && write_block(out, BEGIN_MARK, END_MARK, block) < 0) {
        perror(out);
        return 1;
    }
    return 0;
}
