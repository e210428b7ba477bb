/* Core's internals, shared by its files: registry.c (lifecycle, recovery,
 * reaper), pool.c (warm sandboxes), exec.c (execs and one-shot runs) and
 * catalog.c (images). */
#ifndef CELLA_CORE_CORE_INT_H
#define CELLA_CORE_CORE_INT_H

#include <pthread.h>

#include "box/box.h"
#include "box/mux.h"
#include "box/runtime.h"
#include "core/core.h"
#include "store/store.h"

#define CORE_MAX_IMAGES 64
#define CORE_TOMBSTONES 256

struct sandbox {
    core *c;
    cella_id id;
    char *tenant, *name, *image;
    uint32_t cpus_milli;
    uint64_t memory_mb, idle_timeout_secs;
    char **env;
    int64_t created_at_ms;        /* unix */
    int64_t last_used_ns;         /* monotonic */
    /* Its last use as its record kept it (unix ms; 0: not known), shown
     * until it is used again after a restart (last_used_ns then moves
     * off start_used_ns); and the last_used_ns last written to the record. */
    int64_t restored_used_ms;
    int64_t start_used_ns, saved_used_ns;
    box *b;
    mux_box *mux;
    int ws_fd;
    bool persisted;               /* has a record in the store */
    core_cap_class cap_class;
    /* under core.mu */
    unsigned refs;
    unsigned execs;
    unsigned fs_calls;            /* file operations running (their own cap) */
    bool dead, stopped;
    char dead_reason[160];
};

typedef struct pool_entry {
    box *b;
    int ws_fd;
} pool_entry;

typedef struct tombstone {
    char id[40];
    char tenant[80];
    char why[96];
} tombstone;

struct core {
    const cella_config *cfg;
    box_runtime *rt;
    store *st;
    int lock_fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* execs finishing, teardowns finishing */
    sandbox **v;                  /* the registry, oldest first */
    size_t n, cap;
    tombstone tomb[CORE_TOMBSTONES];
    size_t tomb_next;
    /* Stopped sandboxes whose record could not be deleted (the state
     * directory's disk full, say): retried every reaper pass and at close,
     * or the next start would bring them back. Under mu. */
    char (*undeleted)[CELLA_ID_LEN + 1];
    size_t n_undeleted, cap_undeleted;
    bool ready, draining, closing;
    unsigned execs_running;
    /* Creates past the cap check, not yet registered: their tenants (for
     * the per-tenant cap) and cap classes. */
    struct core_slot {
        char *tenant;
        core_cap_class cls;
    } *creating_v;
    unsigned creating;
    size_t creating_cap;
    unsigned teardowns;           /* background stops still running */
    unsigned teardowns_by[CORE_CAP_CLASSES];   /* the same, by cap class */
    /* warm pool (pool.c) */
    pool_entry *pool;
    size_t pool_n;
    pthread_t pool_thread;
    pthread_cond_t pool_cv;
    bool pool_started;
    /* reaper */
    pthread_t reaper;
    pthread_cond_t reaper_cv;
    bool reaper_started;
    int64_t reap_interval_ms;
    /* catalog (catalog.c) */
    core_image images[CORE_MAX_IMAGES];
    size_t n_images;
    core_metrics m;
    /* code mode's workers (core/code_pool.h) */
    struct code_pool *code;
};

/* registry.c */
int64_t core_wall_ms(void);
/* A new sandbox's box with its workspace, under a new id (id NULL) or a
 * restarted one's. */
int core_start_box(core *c, const cella_id *id, const char *rootfs, const cg_limits *lim,
                   bool fresh_workspace, box **b, int *ws_fd, cella_err *err);
/* The root directory of a custom image, or NULL for a preset (the host image). */
const char *core_image_rootfs(core *c, const char *image);
void core_limits(const core *c, uint32_t cpus_milli, uint64_t memory_mb, cg_limits *lim);
/* Kills a box and removes its workspace (pool leftovers, failed starts). */
void core_discard_box(core *c, box *b, int ws_fd);

/* exec.c: the steps of one-shot runs, shared with typed runs (typed_run.c) */
/* The interpreter for a run's lang (python -> python3, ...; anything else
 * is its own path) and the code file's extension. */
const char *core_run_interp(const char *lang, const char **ext);
/* A file operation fed data on its stdin (a write, a tar-extract) at
 * path, with up to two more "key=value" arguments (NULL when not). */
int core_fs_feed(sandbox *s, const char *op, const char *path, const char *arg1,
                 const char *arg2, const uint8_t *data, size_t n, int client_fd, core_error *e);
/* data written to path in the sandbox (mode 0644, parents made). */
int core_write_in_sandbox(sandbox *s, const char *path, const uint8_t *data, size_t n,
                          int client_fd, core_error *e);
/* Adds fix {context: "during sandbox::run step `<step>`", sandbox_id,
 * inner_code} to e; returns -1. */
int core_run_step_failed(core_error *e, const char *step, const char *sid);

/* pool.c */
void pool_start(core *c);
void pool_stop(core *c);
/* A warm box, or false when the pool is empty. Called without mu. */
bool pool_take(core *c, box **b, int *ws_fd);

/* catalog.c */
void catalog_init(core *c);
const core_image *catalog_find(core *c, const char *name);
/* The image, when it is in the catalog and the allowlist; else NULL and
 * S100. */
const core_image *catalog_check(core *c, const char *name, core_error *e);
/* Whether an image's files are there now. */
bool catalog_available(const core_image *im);
/* Builds the "valid images are ..." list. */
void catalog_allowed_list(core *c, char *buf, size_t n);

#endif
