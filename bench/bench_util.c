#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* Runs argv once with stdio on /dev/null; returns wall ms, or -1 on failure. */
double run_once(char *const argv[], long *rss_kb)
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

void push(char **argv, int *n, const char *s)
{
    if (*n < MAX_ARGS - 1)
        argv[(*n)++] = (char *)s;
    argv[*n] = NULL;
}

/* bubblewrap with what cella's `host` image gives: /usr and its links
 * read-only, the same /etc files, fresh /proc, /dev and /tmp, a workspace,
 * every namespace, uid 1000, a clean environment. */
void bwrap_argv(char **argv, const char *bwrap, const char *ws, char *const cmd[])
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

double pct(double *sorted, int n, double p)
{
    int i = (int)(p * (n - 1) + 0.5);
    return sorted[i];
}

int write_block(const char *path, const char *begin_mark, const char *end_mark, const char *block)
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
    char *b = old ? strstr(old, begin_mark) : NULL;
    char *e = b ? strstr(b, end_mark) : NULL;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *o = fopen(tmp, "w");
    if (!o)
        return -1;
    if (b && e) {
        fwrite(old, 1, (size_t)(b - old), o);
        fprintf(o, "%s\n%s%s", begin_mark, block, e);
    } else {
        if (old)
            fputs(old, o);
        fprintf(o, "\n%s\n%s%s\n", begin_mark, block, end_mark);
    }
    free(old);
    if (fclose(o) != 0)
        return -1;
    return rename(tmp, path);
}


size_t bench_header(char *buf, size_t n, int runs)
{
    struct utsname u;
    uname(&u);
    time_t t = time(NULL);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&t));
    int w = snprintf(buf, n, "Measured %s on Linux %s, %ld CPUs, %d runs of each, interleaved "
                             "(`make bench`).\n\n",
                     date, u.release, sysconf(_SC_NPROCESSORS_ONLN), runs);
    return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
}

long proc_field_kb(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, kl)) {
            v = atol(line + kl);
            break;
        }
    if (f)
        fclose(f);
    return v;
}
