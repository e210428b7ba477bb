/* What the benchmarks that talk to a daemon share: starting `cella serve` on
 * a free loopback port with a throwaway state directory, and a minimal
 * keep-alive HTTP/1.1 client for it (Content-Length answers only, which is
 * what the daemon sends). Every failure exits: these are benchmarks, and a
 * figure measured past a failure would be wrong. */
#ifndef CELLA_BENCH_HTTP_H
#define CELLA_BENCH_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct bench_daemon {
    char dir[64];    /* /tmp/cella-bench-<tag>-XXXXXX: state/, cella.yaml, serve.log */
    char state[96];  /* the daemon's --state-dir */
    pid_t pid;
} bench_daemon;

/* Makes the throwaway directory, writes config (YAML) as its cella.yaml,
 * starts `cella serve` there and waits until /readyz answers 200. */
void bench_daemon_start(bench_daemon *d, const char *tag, const char *cella, const char *config);
/* SIGTERM, waits for the daemon, and removes the throwaway directory. */
void bench_daemon_stop(bench_daemon *d);

/* A new connection to the daemon, with TCP_NODELAY (requests are one write). */
int http_connect(void);
/* As http_connect, but -1 (errno set) where http_connect would exit. */
int http_try_connect(void);
/* Sends one request with body (may be NULL) and reads the answer. Returns
 * the status; out (may be NULL) gets up to cap-1 bytes of the body. */
int http_call(int fd, const char *method, const char *path, const char *body, char *out,
              size_t cap);
/* As http_call, with the whole body in *out (malloc'd, NUL-terminated;
 * the caller frees it) and its length in *len. */
int http_call_alloc(int fd, const char *method, const char *path, const char *body, char **out,
                    size_t *len);
/* PUT path with len bytes of the file src as the body, declared with
 * Content-Length and sent with sendfile: the file is never in this
 * process's memory. out/cap as for http_call. */
int http_put_file(int fd, const char *path, int src, uint64_t len, char *out, size_t cap);
/* GET path with the body spliced into the file dst (never in this
 * process's memory); *len gets the body's length. Error bodies are written
 * to dst too: check the status. */
int http_get_file(int fd, const char *path, int dst, uint64_t *len);

/* The string value of "key" in a flat JSON object ("" when absent). */
void json_field(const char *json, const char *key, char *out, size_t cap);
/* Exits, saying what answered what, when status is not want. */
void must(int status, int want, const char *what, const char *body);

#endif
