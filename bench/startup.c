/* cella-bench-startup: how long a sandboxed command takes from start to
 * finish, against the bare command and against bubblewrap with the same binds,
 * measured in one run and interleaved (so drift hits every variant alike).
 *
 *   cella-bench-startup [--cella PATH] [--bwrap PATH] [--runs N] [--write FILE]
 *
 * Prints a Markdown table of medians, 90th percentiles and ratios, and peak
 * RSS (cella and its agent, as reported by wait4). With --write, replaces the
 * block between the markers below in FILE (docs/performance.md). */

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BEGIN_MARK "<!-- bench:startup:begin -->"
#define END_MARK "<!-- bench:startup:end -->"
#define MAX_ARGS 160

extern char **environ;

typedef struct variant {
    const char *name;
    char *argv[MAX_ARGS];
    double *ms;
    long *rss_kb;
} variant;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* Runs argv once with stdio on /dev/null; returns wall ms, or -1 on failure. */
static double run_once(char *const argv[], long *rss_kb)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
    double t0 = now_ms();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    double t = now_ms() - t0;
    *rss_kb = ru.ru_maxrss;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1;
}

static void push(char **argv, int *n, const char *s)
{
    if (*n < MAX_ARGS - 1)
        argv[(*n)++] = (char *)s;
    argv[*n] = NULL;
}

/* bubblewrap with what cella's `host` image gives: /usr and its links
 * read-only, the same /etc files, fresh /proc, /dev and /tmp, a workspace,
 * every namespace, uid 1000, a clean environment. */
static void bwrap_argv(char **argv, const char *bwrap, const char *ws, char *const cmd[])
{
    static const char *links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    static const char *etc[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                "/etc/alternatives", "/etc/ssl", "/etc/localtime",
                                "/etc/passwd", "/etc/group", "/etc/nsswitch.conf"};
    static char targets[6][256];
    int n = 0;
    push(argv, &n, bwrap);
    const char *fixed[] = {"--unshare-all", "--die-with-parent", "--new-session", "--uid", "1000",
                           "--gid", "1000", "--ro-bind", "/usr", "/usr", "--proc", "/proc",
                           "--dev", "/dev", "--tmpfs", "/tmp", "--bind", ws, "/workspace",
                           "--chdir", "/workspace", "--clearenv", "--setenv", "PATH",
                           "/usr/bin:/bin", "--setenv", "HOME", "/workspace",
                           "--cap-drop", "ALL"};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        push(argv, &n, fixed[i]);
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        struct stat st;
        if (lstat(links[i], &st) < 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            ssize_t l = readlink(links[i], targets[i], sizeof(targets[i]) - 1);
            if (l <= 0)
                continue;
            targets[i][l] = '\0';
            push(argv, &n, "--symlink");
            push(argv, &n, targets[i]);
        } else {
            push(argv, &n, "--ro-bind");
            push(argv, &n, links[i]);
        }
        push(argv, &n, links[i]);
    }
    for (size_t i = 0; i < sizeof(etc) / sizeof(etc[0]); i++) {
        if (access(etc[i], F_OK) < 0)
            continue;
        push(argv, &n, "--ro-bind");
        push(argv, &n, etc[i]);
        push(argv, &n, etc[i]);
    }
    for (int i = 0; cmd[i]; i++)
        push(argv, &n, cmd[i]);
}

static void fill(variant *v, const char *name, char *const prefix[], char *const cmd[])
{
    int n = 0;
    v->name = name;
    for (int i = 0; prefix && prefix[i]; i++)
        push(v->argv, &n, prefix[i]);
    for (int i = 0; cmd[i]; i++)
        push(v->argv, &n, cmd[i]);
}

static double pct(double *sorted, int n, double p)
{
    int i = (int)(p * (n - 1) + 0.5);
    return sorted[i];
}

static int write_block(const char *path, const char *block)
{
    FILE *f = fopen(path, "r");
    char *old = NULL;
    size_t len = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        old = malloc(len + 1);
        len = fread(old, 1, len, f);
        old[len] = '\0';
        fclose(f);
    }
    char *b = old ? strstr(old, BEGIN_MARK) : NULL;
    char *e = b ? strstr(b, END_MARK) : NULL;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *o = fopen(tmp, "w");
    if (!o)
        return -1;
    if (b && e) {
        fwrite(old, 1, (size_t)(b - old), o);
        fprintf(o, "%s\n%s%s", BEGIN_MARK, block, e);
    } else {
        if (old)
            fputs(old, o);
        fprintf(o, "\n%s\n%s%s\n", BEGIN_MARK, block, END_MARK);
    }
    free(old);
    if (fclose(o) != 0)
        return -1;
    return rename(tmp, path);
}

int main(int argc, char **argv)
{
    const char *cella = "./build/cella", *bwrap = "/usr/bin/bwrap", *out = NULL;
    int runs = 200;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cella") && i + 1 < argc)
            cella = argv[++i];
        else if (!strcmp(argv[i], "--bwrap") && i + 1 < argc)
            bwrap = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--write") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--cella PATH] [--bwrap PATH] [--runs N] [--write FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 5)
        runs = 5;
    bool have_bwrap = access(bwrap, X_OK) == 0;
    char ws[] = "/tmp/cella-bench-ws-XXXXXX";
    if (!mkdtemp(ws)) {
        perror("mkdtemp");
        return 1;
    }
    char *cmd_true[] = {"/bin/true", NULL};
    char *cmd_py[] = {"/usr/bin/python3", "-c", "pass", NULL};
    char *cella_prefix[] = {(char *)cella, "box", "--", NULL};
    variant v[6];
    memset(v, 0, sizeof(v));
    int nv = 0;
    char **cmds[2] = {cmd_true, cmd_py};
    const char *labels[2][3] = {{"/bin/true", "cella box -- /bin/true", "bwrap /bin/true"},
                                {"python3 -c pass", "cella box -- python3 -c pass",
                                 "bwrap python3 -c pass"}};
    for (int c = 0; c < 2; c++) {
        fill(&v[nv++], labels[c][0], NULL, cmds[c]);
        fill(&v[nv++], labels[c][1], cella_prefix, cmds[c]);
        if (have_bwrap) {
            v[nv].name = labels[c][2];
            bwrap_argv(v[nv++].argv, bwrap, ws, cmds[c]);
        }
    }
    for (int i = 0; i < nv; i++) {
        v[i].ms = calloc((size_t)runs, sizeof(double));
        v[i].rss_kb = calloc((size_t)runs, sizeof(long));
    }
    /* Warm up caches, then interleave. */
    for (int w = 0; w < 10; w++)
        for (int i = 0; i < nv; i++) {
            long rss;
            if (run_once(v[i].argv, &rss) < 0) {
                fprintf(stderr, "bench: '%s' failed\n", v[i].name);
                return 1;
            }
        }
    for (int r = 0; r < runs; r++)
        for (int i = 0; i < nv; i++) {
            v[i].ms[r] = run_once(v[i].argv, &v[i].rss_kb[r]);
            if (v[i].ms[r] < 0) {
                fprintf(stderr, "bench: '%s' failed\n", v[i].name);
                return 1;
            }
        }
    rmdir(ws);

    char block[8192];
    size_t off = 0;
    struct utsname u;
    uname(&u);
    time_t t = time(NULL);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&t));
    off += (size_t)snprintf(block + off, sizeof(block) - off,
                            "Measured %s on Linux %s, %ld CPUs, %d runs of each, interleaved "
                            "(`make bench`).\n\n"
                            "| command | median ms | p90 ms | vs bare | vs bwrap | peak RSS KiB |\n"
                            "|---|---:|---:|---:|---:|---:|\n",
                            date, u.release, sysconf(_SC_NPROCESSORS_ONLN), runs);
    double med[6];
    for (int i = 0; i < nv; i++) {
        qsort(v[i].ms, (size_t)runs, sizeof(double), cmp_double);
        qsort(v[i].rss_kb, (size_t)runs, sizeof(long), cmp_long);
        med[i] = pct(v[i].ms, runs, 0.5);
    }
    int per = have_bwrap ? 3 : 2;
    for (int i = 0; i < nv; i++) {
        int base = (i / per) * per;
        char vs_bwrap[32] = "";
        if (have_bwrap && i % per != 2)
            snprintf(vs_bwrap, sizeof(vs_bwrap), "%.2f", med[i] / med[base + 2]);
        off += (size_t)snprintf(block + off, sizeof(block) - off,
                                "| `%s` | %.2f | %.2f | %.2f | %s | %ld |\n", v[i].name, med[i],
                                pct(v[i].ms, runs, 0.9), med[i] / med[base], vs_bwrap,
                                v[i].rss_kb[runs / 2]);
    }
    if (have_bwrap) {
        off += (size_t)snprintf(block + off, sizeof(block) - off, "\nSandbox overhead (median minus bare):\n\n");
        for (int c = 0; c < nv / per; c++) {
            double oc = med[c * per + 1] - med[c * per], ob = med[c * per + 2] - med[c * per];
            off += (size_t)snprintf(block + off, sizeof(block) - off,
                                    "- `%s`: cella %.2f ms, bwrap %.2f ms, ratio %.2f\n",
                                    labels[c][0], oc, ob, oc / ob);
        }
    } else {
        off += (size_t)snprintf(block + off, sizeof(block) - off,
                                "\n(bubblewrap not found: no comparison)\n");
    }
    fputs(block, stdout);
    if (out && write_block(out, block) < 0) {
        perror(out);
        return 1;
    }
    return 0;
}
