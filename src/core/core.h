/* Sandboxes as objects: ids, tenants, states, the registry and its store,
 * idle reaping, concurrency caps, the warm pool and the image catalog. Core
 * speaks C structs and S-codes (core/errors.h), never JSON: each API dialect
 * translates its own wire format into these calls. */
#ifndef CELLA_CORE_CORE_H
#define CELLA_CORE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/errors.h"
#include "util/buf.h"

typedef struct core core;
typedef struct sandbox sandbox;
typedef struct core_exec core_exec;

/* Opens the sandbox runtime, the state, and restarts every sandbox the
 * store lists (its workspace intact, its processes new); then starts the
 * warm pool and the reaper. cfg must outlive the core. */
int core_open(const cella_config *cfg, core **out, cella_err *err);
/* Stops the threads and every sandbox's processes; records and workspaces
 * stay for the next start. */
void core_close(core *c);
/* Ready: state recovered, the pool filled once. */
bool core_ready(core *c);
/* From now on new work is refused with S301; running execs go on. */
void core_drain(core *c);
/* Waits (up to timeout_ms) until no exec is running. */
bool core_wait_idle(core *c, int timeout_ms);

/* ---- catalog ------------------------------------------------------------ */

typedef struct core_image {
    const char *name;
    const char *kind;             /* "preset" or "custom" */
    const char *ref;              /* what it is made from: "host" or a root directory */
    const char *interpreter;      /* presets: the program checked for, else NULL */
    bool available;               /* its files are present (set by core_catalog) */
    bool allowed;                 /* in the allowlist */
} core_image;

/* Presets first (python, node, shell), then custom images by name. The
 * strings live as long as the core. Returns the count written (at most max). */
size_t core_catalog(core *c, core_image *out, size_t max);

/* ---- sandboxes ---------------------------------------------------------- */

/* The concurrency cap a sandbox counts against. The gateway's sessions
 * have a cap of their own (gateway_max_sessions, the Code Sandbox's "max
 * sessions"), so sessions and other sandboxes never take each other's
 * places: a session counts only against its cap, any other sandbox only
 * against max_concurrent_sandboxes. max_sandboxes_per_tenant counts both. */
typedef enum core_cap_class {
    CORE_CAP_SANDBOX = 0,         /* max_concurrent_sandboxes */
    CORE_CAP_SESSION = 1,         /* gateway_max_sessions */
} core_cap_class;
#define CORE_CAP_CLASSES 2

typedef struct core_create_req {
    const char *image;
    bool has_cpus;
    uint32_t cpus_milli;
    bool has_memory;
    uint64_t memory_mb;
    const char *name;             /* NULL: none */
    bool network;
    bool has_idle;
    uint64_t idle_timeout_secs;
    char *const *env;             /* "K=V" entries, names checked by core_create; may be NULL */
    bool ephemeral;               /* a one-shot run's: not recorded, so not restarted after a crash */
    core_cap_class cap_class;     /* kept in its record: a restart counts it the same way */
} core_create_req;

typedef struct sandbox_info {
    char id[40];
    char tenant[80];
    char name[128];               /* "" when none */
    bool has_name;
    char image[80];
    uint32_t cpus_milli;
    uint64_t memory_mb;
    uint64_t idle_timeout_secs;
    int64_t created_at_ms;        /* unix ms */
    int64_t last_used_at_ms;      /* unix ms */
    uint64_t age_secs;
    unsigned execs_in_flight;
    unsigned exec_slots_free;
    bool dead;                    /* its agent died: only stop is left */
    char dead_reason[160];
} sandbox_info;

/* Checks in iii's order: count (S400: the cap of r->cap_class, then
 * max_sandboxes_per_tenant), image (S100), caps (S400), image files
 * (S101), env names (S001), start (S300). On success *out holds a reference. */
int core_create(core *c, const char *tenant, const core_create_req *r, sandbox **out,
                core_error *e);
/* By id within a tenant: S001 for a malformed id, S002 for an unknown one
 * (also another tenant's: ids never leak across tenants), S004 for one
 * reaped recently. */
int core_get(core *c, const char *tenant, const char *id, sandbox **out, core_error *e);
void sandbox_ref(sandbox *s);
void sandbox_unref(sandbox *s);
void sandbox_get_info(sandbox *s, sandbox_info *out);
const char *sandbox_id(const sandbox *s);
/* Every live sandbox of a tenant (NULL: all), oldest first. Free with cella_free. */
int core_list(core *c, const char *tenant, sandbox_info **out, size_t *n);
/* Removes the sandbox from the registry (a second stop is S002), kills
 * everything in it and frees every resource. wait: return only once the
 * teardown is complete; otherwise it finishes in the background. */
int core_stop(core *c, const char *tenant, const char *id, bool wait, core_error *e);
/* Marks a sandbox used now (the idle clock). */
void sandbox_touch(sandbox *s);

/* ---- exec ------------------------------------------------------------- */

typedef struct core_exec_req {
    char *const *argv;            /* non-empty */
    char *const *env;             /* "K=V" laid over the sandbox's own; may be NULL */
    const char *workdir;          /* NULL: /workspace */
    bool has_timeout;
    uint64_t timeout_ms;          /* clamped to the configured maximum */
    bool has_stdin;
    const uint8_t *stdin_data;
    size_t stdin_len;
    bool stream;                  /* output taken as it comes (core_exec_take) */
    bool builtin;                 /* argv names an agent built-in (agent/builtin.c) */
    /* internal to core/fs.c: */
    bool fs_call;                 /* counts against the file-operation cap, not the exec cap */
    bool no_timeout;              /* a transfer: bounded by its client, not a clock */
    bool window;                  /* stream mode: stdout in a window, no cap */
    bool stdin_stream;            /* stdin fed later (core_fs_upload_feed) */
} core_exec_req;

typedef struct core_exec_result {
    bool has_exit_code;           /* false when a signal killed it */
    int exit_code;                /* 124 when timed out */
    int signal;
    bool timed_out;
    uint64_t timeout_ms;          /* the timeout applied */
    uint64_t duration_ms;
    bool stdout_truncated, stderr_truncated;
    bool oom_killed;
    cbuf out[3];                  /* [1] stdout, [2] stderr: empty in stream mode */
} core_exec_result;

/* S004 for a dead or stopped sandbox, S003 at the exec cap, S301 when draining. */
int core_exec_start(sandbox *s, const core_exec_req *r, core_exec **out, core_error *e);
/* mux_exec_wait's flags (box/mux.h): MUX_DONE, MUX_OUTPUT, MUX_CLIENT_GONE. */
int core_exec_wait(core_exec *x, int client_fd, int timeout_ms);
bool core_exec_take(core_exec *x, int *stream, cbuf *out);
/* After MUX_DONE. */
int core_exec_finish(core_exec *x, core_exec_result *res, core_error *e);
void core_exec_end(core_exec *x);          /* kills it if still running, frees it */
/* Start, wait (killing it if client_fd hangs up), finish, end. */
int core_exec_run(sandbox *s, const core_exec_req *r, int client_fd, core_exec_result *res,
                  core_error *e);
void core_exec_result_free(core_exec_result *r);
/* File operations running at once in one sandbox (beside its execs). */
#define CORE_FS_MAX_CALLS 16
/* The most a file operation's JSON result may hold (grep keeps under 8 MiB). */
#define CORE_FS_RESULT_MAX (16u << 20)
/* Internal to core: the mux exec under a core exec (core/fs.c streams). */
struct mux_exec *core_exec_mux(core_exec *x);
/* How long a waiter gives the agent past a command's own timeout. */
#define CORE_AGENT_GRACE_MS 10000

/* ---- one-shot runs (iii's sandbox::run) ---------------------------------- */

typedef struct core_run_file {
    const char *path;
    const uint8_t *content;
    size_t len;
} core_run_file;

typedef struct core_run_req {
    const char *image;
    const char *lang;
    const char *code;
    size_t code_len;
    const core_run_file *files;
    size_t n_files;
    char *const *env;
    bool has_stdin;
    const uint8_t *stdin_data;
    size_t stdin_len;
    bool has_timeout;
    uint64_t timeout_ms;
    bool keep_sandbox;
} core_run_req;

/* Create, write the files and the code (/tmp/run.<ext>), exec the
 * interpreter, stop (unless keep_sandbox). An error in a step keeps its
 * S-code and gets fix {context, sandbox_id, inner_code}. sandbox_id_out
 * (40 bytes) receives the run's sandbox id once one was created (kept or
 * not: a caller's error fix names it either way), else "". */
int core_run(core *c, const char *tenant, const core_run_req *r, int client_fd,
             core_exec_result *res, char *sandbox_id_out, core_error *e);

/* ---- files (core/fs.c) ------------------------------------------------------ */

/* One of the agent's file operations (agent/fs_int.h has the list, the
 * arguments and the results). It runs inside the sandbox as its user;
 * the daemon never resolves a sandbox path itself. File operations bump
 * the idle clock, may run while execs are in flight, and have a cap of
 * their own (CORE_FS_MAX_CALLS, then S003). */
typedef struct core_fs_req {
    const char *op;               /* "ls", "grep", ... */
    char *const *args;            /* "key=value" words, NULL-terminated */
    bool has_stdin;
    const uint8_t *stdin_data;
    size_t stdin_len;
    /* 0: the default (two minutes; none for a transfer). Else the caller's
     * deadline, what is left of a run's timeout: past it the operation is
     * killed and the call fails with S200, which the caller answers as a
     * timed-out run. */
    uint64_t timeout_ms;
} core_fs_req;

/* Runs it; result receives its JSON object (text, as the agent wrote it:
 * untrusted, the caller parses it). Failures are S21x (S211 with fix
 * {"parents": true} for a write's missing parent), S400 for the quota. */
int core_fs(sandbox *s, const core_fs_req *r, int client_fd, cbuf *result, core_error *e);

/* Transfers: bytes streamed through a window in either direction, never
 * whole in the daemon's memory, with no clock (the client's hang-up ends
 * them, killing the operation: an upload then replaces nothing), unless
 * the request sets timeout_ms (Flujo's files, within the run's timeout). */
typedef struct core_fs_stream core_fs_stream;
/* cat, tar-create: started, and header gets their first line (JSON text). */
int core_fs_download(sandbox *s, const core_fs_req *r, int client_fd, core_fs_stream **out,
                     cbuf *header, core_error *e);
/* Up to max bytes of the download; 0 at its end; -1 and e on failure. Blocks. */
ssize_t core_fs_read(core_fs_stream *st, void *buf, size_t max, core_error *e);
/* write, tar-extract: started with stdin open. */
int core_fs_upload_begin(sandbox *s, const core_fs_req *r, int client_fd, core_fs_stream **out,
                         core_error *e);
/* -1 when the operation ended early (core_fs_upload_end says why). Blocks
 * while the sandbox catches up. */
int core_fs_upload_feed(core_fs_stream *st, const void *p, size_t n);
/* Ends stdin, waits for the operation, and fills result (as core_fs). */
int core_fs_upload_end(core_fs_stream *st, cbuf *result, core_error *e);
/* Frees it; a transfer still running is killed. */
void core_fs_close(core_fs_stream *st);
/* The workspace quota in bytes (0: none), for uploads' "quota=" argument. */
uint64_t core_workspace_quota(core *c);

/* The state database (store/store.h), for a dialect that keeps state of
 * its own beside the registry (the gateway's sessions). Lives as long as
 * the core. */
struct store *core_store(core *c);

/* Code mode's worker pool (core/code_pool.h), started with the core. */
struct code_pool *core_code_pool(core *c);

/* ---- metrics ------------------------------------------------------------ */

#define CORE_EXEC_BUCKETS 12
extern const double core_exec_bucket_secs[CORE_EXEC_BUCKETS];

typedef struct core_metrics {
    unsigned sandboxes_live, sandboxes_dead;
    unsigned pool_depth, pool_target;
    uint64_t creates_ok, creates_failed;
    uint64_t execs_ok, execs_nonzero, execs_timed_out, execs_failed;
    uint64_t exec_hist[CORE_EXEC_BUCKETS + 1];   /* cumulative-ready counts per bucket, last = +Inf */
    double exec_sum_secs;
    uint64_t oom_kills;
    uint64_t reaped;
    uint64_t stops;
} core_metrics;

void core_get_metrics(core *c, core_metrics *m);

#endif
