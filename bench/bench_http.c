#include "bench_http.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* One daemon per benchmark process: its port is where every connection goes. */
static int port;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("bench: write to the daemon");
        p += w;
        n -= (size_t)w;
    }
}

/* ---- the daemon ------------------------------------------------------------- */

void bench_daemon_start(bench_daemon *d, const char *tag, const char *cella, const char *config)
{
    snprintf(d->dir, sizeof(d->dir), "/tmp/cella-bench-%.16s-XXXXXX", tag);
    if (!mkdtemp(d->dir))
        die("mkdtemp");
    char cfg[96], log[96];
    snprintf(d->state, sizeof(d->state), "%s/state", d->dir);
    snprintf(cfg, sizeof(cfg), "%s/cella.yaml", d->dir);
    snprintf(log, sizeof(log), "%s/serve.log", d->dir);
    FILE *cf = fopen(cfg, "w");
    if (!cf || fputs(config, cf) < 0 || fclose(cf) != 0)
        die(cfg);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)cella, "serve", "--listen", "127.0.0.1:0", "--state-dir",
                    d->state, "--config", cfg, NULL};
    if (posix_spawn(&d->pid, cella, &fa, NULL, argv, environ) != 0)
        die("spawn cella serve");
    posix_spawn_file_actions_destroy(&fa);
    /* Port 0 lets the kernel pick a free port; the daemon logs the one it got. */
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
}

void bench_daemon_stop(bench_daemon *d)
{
    kill(d->pid, SIGTERM);
    int status;
    while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
        ;
    char rm[96];
    snprintf(rm, sizeof(rm), "rm -rf %s", d->dir);
    if (system(rm) != 0)
        fprintf(stderr, "bench: could not remove %s\n", d->dir);
}

/* ---- the client --------------------------------------------------------------- */

int http_try_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int http_connect(void)
{
    int fd = http_try_connect();
    if (fd < 0)
        die("connect");
    return fd;
}

/* The request's head (and body, when there is one) in one write, so that a
 * small request is one segment as a real client's would be. */
static void send_request(int fd, const char *method, const char *path, const char *ctype,
                         uint64_t clen, const char *body)
{
    char head[1024];
    int n = snprintf(head, sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\n"
                     "Content-Length: %llu\r\n\r\n",
                     method, path, ctype, (unsigned long long)clen);
    if (n < 0 || (size_t)n >= sizeof(head)) {
        fprintf(stderr, "bench: request path too long: %s\n", path);
        exit(1);
    }
    size_t bl = body ? strlen(body) : 0;
    char *req = malloc((size_t)n + bl);
    if (!req)
        die("malloc");
    memcpy(req, head, (size_t)n);
    if (bl)
        memcpy(req + n, body, bl);
    write_all(fd, req, (size_t)n + bl);
    free(req);
}

/* Reads an answer's head into buf (which may also receive the start of the
 * body). Returns the status; *got is what was read, *head the head's
 * length, *clen the Content-Length. */
static int read_head(int fd, char *buf, size_t cap, size_t *got, size_t *head, uint64_t *clen)
{
    *got = 0;
    for (;;) {
        ssize_t r = read(fd, buf + *got, cap - 1 - *got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fprintf(stderr, "bench: the daemon closed the connection\n");
            exit(1);
        }
        *got += (size_t)r;
        buf[*got] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end) {
            *head = (size_t)(end + 4 - buf);
            char *cl = strcasestr(buf, "Content-Length:");
            *clen = cl && cl < end ? strtoull(cl + 15, NULL, 10) : 0;
            return atoi(buf + 9);
        }
        if (*got == cap - 1) {
            fprintf(stderr, "bench: an answer's head is over %zu bytes\n", cap);
            exit(1);
        }
    }
}

int http_call_alloc(int fd, const char *method, const char *path, const char *body, char **out,
                    size_t *len)
{
    send_request(fd, method, path, "application/json", body ? strlen(body) : 0, body);
    char buf[16384];
    size_t got, head;
    uint64_t clen;
    int status = read_head(fd, buf, sizeof(buf), &got, &head, &clen);
    char *b = malloc((size_t)clen + 1);
    if (!b)
        die("malloc");
    size_t have = got - head < clen ? got - head : (size_t)clen;
    memcpy(b, buf + head, have);
    while (have < clen) {
        ssize_t r = read(fd, b + have, (size_t)clen - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fprintf(stderr, "bench: the daemon closed the connection mid-answer\n");
            exit(1);
        }
        have += (size_t)r;
    }
    b[clen] = '\0';
    *out = b;
    *len = (size_t)clen;
    return status;
}

int http_call(int fd, const char *method, const char *path, const char *body, char *out,
              size_t cap)
{
    char *b;
    size_t bl;
    int status = http_call_alloc(fd, method, path, body, &b, &bl);
    if (out) {
        size_t n = bl < cap - 1 ? bl : cap - 1;
        memcpy(out, b, n);
        out[n] = '\0';
    }
    free(b);
    return status;
}

int http_put_file(int fd, const char *path, int src, uint64_t len, char *out, size_t cap)
{
    send_request(fd, "PUT", path, "application/octet-stream", len, NULL);
    off_t off = 0;
    while ((uint64_t)off < len) {
        ssize_t w = sendfile(fd, src, &off, (size_t)(len - (uint64_t)off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("bench: sendfile to the daemon");
    }
    char buf[16384];
    size_t got, head;
    uint64_t clen;
    int status = read_head(fd, buf, sizeof(buf), &got, &head, &clen);
    /* Upload answers are short JSON; the head read has them whole or nearly. */
    while (got - head < clen && got < sizeof(buf) - 1) {
        ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    if (out)
        snprintf(out, cap, "%s", buf + head);
    return status;
}

/* Moves n bytes from fd to the file dst through a pipe: splice never copies
 * them into this process. */
static void splice_to(int fd, int dst, uint64_t n)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        die("pipe2");
    fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
    while (n > 0) {
        size_t want = n < (1 << 20) ? (size_t)n : 1 << 20;
        ssize_t in = splice(fd, NULL, p[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_MORE);
        if (in < 0 && errno == EINTR)
            continue;
        if (in <= 0) {
            fprintf(stderr, "bench: the daemon closed the connection mid-body\n");
            exit(1);
        }
        n -= (uint64_t)in;
        while (in > 0) {
            ssize_t w = splice(p[0], NULL, dst, NULL, (size_t)in, SPLICE_F_MOVE);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                die("bench: splice to the file");
            in -= w;
        }
    }
    close(p[0]);
    close(p[1]);
}

int http_get_file(int fd, const char *path, int dst, uint64_t *len)
{
    send_request(fd, "GET", path, "application/octet-stream", 0, NULL);
    char buf[16384];
    size_t got, head;
    uint64_t clen;
    int status = read_head(fd, buf, sizeof(buf), &got, &head, &clen);
    size_t have = got - head < clen ? got - head : (size_t)clen;
    for (size_t done = 0; done < have;) {
        ssize_t w = write(dst, buf + head + done, have - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("bench: write to the file");
        done += (size_t)w;
    }
    splice_to(fd, dst, clen - have);
    *len = clen;
    return status;
}

void json_field(const char *json, const char *key, char *out, size_t cap)
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

void must(int status, int want, const char *what, const char *body)
{
    if (status != want) {
        fprintf(stderr, "bench: %s answered %d: %s\n", what, status, body);
        exit(1);
    }
}
