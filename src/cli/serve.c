/* `cella serve`: configuration (flags over environment over file over the
 * embedded defaults), the refusal to serve beyond loopback without tokens,
 * then the core and the HTTP front, until SIGTERM or SIGINT: those drain
 * (new requests are refused, running execs get their answer), a second one
 * ends at once. */
#include "cli/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/code.h"
#include "api/flujo.h"
#include "api/fs.h"
#include "api/gateway.h"
#include "api/iii.h"
#include "api/mcp.h"
#include "api/native.h"
#include "core/config.h"
#include "core/core.h"
#include "http/server.h"
#include "util/alloc.h"
#include "util/fdio.h"
#include "util/log.h"

static const char usage[] =
    "Usage: cella serve [OPTIONS]\n"
    "\n"
    "The sandbox daemon: the HTTP API on ADDR:PORT, sandboxes kept in the state\n"
    "directory so they survive a restart.\n"
    "\n"
    "Options (most can also come from an environment variable or from the config\n"
    "file's field of the same name; a flag wins over the environment, which wins\n"
    "over the file):\n"
    "  --listen ADDR:PORT   where to serve (CELLA_LISTEN; default 127.0.0.1:7878;\n"
    "                       port 0 picks a free one, printed in the log)\n"
    "  --state-dir DIR      state: registry, workspaces (CELLA_STATE_DIR;\n"
    "                       default /var/lib/cella as root)\n"
    "  --config FILE        YAML config, iii-sandbox's fields (CELLA_CONFIG)\n"
    "  --tokens FILE        bearer tokens: '<token> <tenant> [admin]' per line\n"
    "                       (CELLA_TOKENS_FILE); required to listen beyond loopback\n"
    "  --pool-size N        warm sandboxes kept ready (config: pool_size; default 2)\n"
    "  -q, --quiet          log warnings and errors only\n"
    "  -v, --verbose        log debug lines too\n"
    "  -h, --help           this text\n"
    "\n"
    "Logs are logfmt lines on stderr: one per request and per sandbox event.\n"
    "SIGTERM or SIGINT drains: new requests get S301, running execs finish and\n"
    "answer, then the daemon exits; a second signal exits at once. Sandboxes\n"
    "(their records and /workspace files) survive; their processes do not.\n"
    "Reference: docs/api.md, docs/serve.md.\n";

static bool loopback(const char *listen)
{
    char *host = NULL;
    uint16_t port;
    if (config_parse_listen(listen, &host, &port, NULL) < 0)
        return false;
    bool lo = !strcmp(host, "localhost") || !strcmp(host, "::1");
    struct in_addr a;
    if (!lo && inet_pton(AF_INET, host, &a) == 1)
        lo = (ntohl(a.s_addr) >> 24) == 127;
    cella_free(host);
    return lo;
}

typedef struct serve_flags {
    const char *listen, *state_dir, *config, *tokens;
    long pool_size;
    int verbosity;
} serve_flags;

/* Open files: one per connection (each a thread) and a handful per
 * sandbox (its socket, pidfd, workspace, cgroup files) and per call. The
 * soft limit is often 1024 (systemd's default) under a far higher hard
 * one, and max_connections past it made accept() fail with EMFILE: new
 * connections waited in the backlog until they timed out, the listener
 * spun, and creates failed for want of a descriptor. So the soft limit is
 * raised to the hard one; a max_connections even that cannot carry is
 * refused at start, naming the numbers, and one that leaves too little
 * for the sandboxes is warned about. */
static int raise_nofile(const cella_config *cfg, cella_err *err)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return cella_err_set(err, errno, "getrlimit(RLIMIT_NOFILE)");
    if (rl.rlim_cur != rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            return cella_err_set(err, errno, "raise the open-files limit to %llu",
                                 (unsigned long long)rl.rlim_max);
    }
    if (rl.rlim_cur == RLIM_INFINITY)
        return 0;
    uint64_t conns = (uint64_t)cfg->max_connections + 64;
    uint64_t boxes = 16 * ((uint64_t)cfg->max_concurrent_sandboxes + cfg->gateway_max_sessions +
                           cfg->pool_size);
    if (rl.rlim_cur < conns)
        return cella_err_set(err, 0,
                             "max_connections %u needs about %llu open files, but the limit "
                             "is %llu (ulimit -n): raise it, or lower max_connections",
                             cfg->max_connections, (unsigned long long)conns,
                             (unsigned long long)rl.rlim_cur);
    if (rl.rlim_cur < conns + boxes)
        log_warn("the open-files limit (%llu) is below what max_connections and the sandbox caps "
                 "may use at once (about %llu): raise it (ulimit -n)",
                 (unsigned long long)rl.rlim_cur, (unsigned long long)(conns + boxes));
    return 0;
}

static int parse_flags(int argc, char **argv, serve_flags *f)
{
    f->pool_size = -1;
    f->verbosity = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--listen")      ? &f->listen
                            : !strcmp(a, "--state-dir") ? &f->state_dir
                            : !strcmp(a, "--config")    ? &f->config
                            : !strcmp(a, "--tokens")    ? &f->tokens
                                                        : NULL;
        if (slot || !strcmp(a, "--pool-size")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "cella serve: %s needs a value\n", a);
                return -1;
            }
            if (slot) {
                *slot = argv[++i];
            } else {
                char *end;
                f->pool_size = strtol(argv[++i], &end, 10);
                if (*end || f->pool_size < 0 || f->pool_size > 64) {
                    fprintf(stderr, "cella serve: --pool-size takes 0 to 64\n");
                    return -1;
                }
            }
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            f->verbosity = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            f->verbosity = -1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 1;
        } else {
            fprintf(stderr, "cella serve: unknown option '%s'\n\n%s", a, usage);
            return -1;
        }
    }
    return 0;
}

static void replace(char **field, const char *v)
{
    cella_free(*field);
    *field = cella_strdup(v);
}

/* The most malloc arenas the daemon's threads share. There is a thread per
 * connection, and glibc makes up to 8 arenas per CPU, each keeping what was
 * freed in it: under bench/load the idle daemon's RSS climbed by 15 MiB in a
 * minute on 2 CPUs (16 arenas), where with one arena it stayed flat. The
 * threads spend their time waiting on sockets and agents, not in malloc. */
#define SERVE_MALLOC_ARENAS 4

int cli_serve_main(int argc, char **argv)
{
    /* Before any thread starts; MALLOC_ARENA_MAX in the environment wins. */
    if (!getenv("MALLOC_ARENA_MAX"))
        mallopt(M_ARENA_MAX, SERVE_MALLOC_ARENAS);
    serve_flags f = {0};
    int pr = parse_flags(argc, argv, &f);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    log_set_logfmt(true);
    log_set_level(f.verbosity > 0 ? LOG_DEBUG : f.verbosity < 0 ? LOG_WARN : LOG_INFO);

    cella_config cfg;
    config_init(&cfg);
    cfg_tokens tokens = {0};
    core *c = NULL;
    http_server *srv = NULL;
    cella_err err;
    int rc = 1;
    const char *cfile = f.config ? f.config : getenv("CELLA_CONFIG");
    if (cfile && *cfile && config_load_file(&cfg, cfile, &err) < 0)
        goto fail;
    if (config_load_env(&cfg, NULL, &err) < 0)
        goto fail;
    if (f.listen)
        replace(&cfg.listen, f.listen);
    if (f.state_dir)
        replace(&cfg.state_dir, f.state_dir);
    if (f.tokens)
        replace(&cfg.tokens_file, f.tokens);
    if (f.pool_size >= 0)
        cfg.pool_size = (uint32_t)f.pool_size;
    if (config_validate(&cfg, &err) < 0)
        goto fail;
    if (raise_nofile(&cfg, &err) < 0)
        goto fail;
    if (cfg.tokens_file && tokens_load_file(&tokens, cfg.tokens_file, &err) < 0)
        goto fail;
    /* A tokens file that names no one (emptied to revoke everybody, or
     * written wrong) must not fall back to open mode, where every local
     * process is an admin: fail closed. */
    if (cfg.tokens_file && tokens.n == 0) {
        cella_err_set(&err, 0,
                      "%s lists no token: that would leave the daemon open to every local "
                      "process; add a line '<token> <tenant> [admin]', or give no tokens file "
                      "for open mode on loopback",
                      cfg.tokens_file);
        goto fail;
    }
    /* Beyond loopback, no tokens would mean anyone who can reach the port
     * runs code on this machine. */
    if (tokens.n == 0 && !loopback(cfg.listen)) {
        cella_err_set(&err, 0,
                      "refusing to listen on %s without tokens: anyone who can reach it could "
                      "run code here; give --tokens FILE (or listen on 127.0.0.1)",
                      cfg.listen);
        goto fail;
    }
    /* Signals are taken by sigwait below; every thread inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (core_open(&cfg, &c, &err) < 0)
        goto fail;
    /* Every dialect's routes, in one table for the server. */
    http_route routes[HTTP_MAX_ROUTES_TOTAL + 1];
    size_t nr = 0;
    const http_route *tables[] = {api_native_routes, api_fs_routes, api_iii_routes,
                                  api_flujo_routes, api_gateway_routes, api_mcp_routes,
                                  api_code_routes};
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
        for (const http_route *r = tables[t]; r->method; r++) {
            /* A route dropped in silence would answer 404 for no clear reason. */
            if (nr == HTTP_MAX_ROUTES_TOTAL) {
                cella_err_set(&err, 0, "more routes than HTTP_MAX_ROUTES_TOTAL (%d)",
                              HTTP_MAX_ROUTES_TOTAL);
                goto fail;
            }
            routes[nr++] = *r;
        }
    routes[nr] = (http_route){0};
    http_opts ho = {.cfg = &cfg, .core = c, .tokens = &tokens, .routes = routes};
    if (http_start(&ho, &srv, &err) < 0)
        goto fail;
    api_native_set_server(srv);
    log_info("event=listening addr=%s tenants=%s version=%s", http_bound_addr(srv),
             tokens.n ? "tokens" : "open", CELLA_VERSION);

    for (;;) {
        int sig = 0;
        if (sigwait(&sigs, &sig) != 0)
            continue;
        if (sig == SIGHUP)
            continue;             /* no reload yet: ignored rather than fatal */
        log_info("event=draining signal=%s", sig == SIGTERM ? "TERM" : "INT");
        break;
    }
    core_drain(c);
    /* Running execs finish and answer; a second signal cuts the wait short.
     * So does drain_timeout_secs: a transfer has no time limit of its own,
     * and a slow but live client must not hold a shutdown for ever (what it
     * was uploading is dropped whole: writes are atomic). */
    int64_t drain_end = cfg.drain_timeout_secs
                            ? clock_now_ns() + (int64_t)cfg.drain_timeout_secs * 1000000000
                            : INT64_MAX;
    for (;;) {
        if (core_wait_idle(c, 200))
            break;
        if (clock_now_ns() >= drain_end) {
            log_warn("event=drain_timeout secs=%llu (exiting with calls still running)",
                     (unsigned long long)cfg.drain_timeout_secs);
            break;
        }
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT)) {
            log_warn("second signal: exiting without waiting for running execs");
            break;
        }
    }
    /* Let the last answers leave before connections are closed. */
    usleep(200 * 1000);
    api_native_set_server(NULL);
    http_stop(srv);
    srv = NULL;
    core_close(c);
    c = NULL;
    log_info("event=stopped");
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "cella serve: %s\n", err.msg);
    rc = 1;
out:
    http_stop(srv);
    core_close(c);
    tokens_free(&tokens);
    config_free(&cfg);
    return rc;
}
