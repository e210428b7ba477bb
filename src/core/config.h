/* The daemon's configuration: embedded defaults, then the config file (YAML,
 * iii-sandbox's fields as they are plus cella's own), then the environment
 * (CELLA_* and the gateway's SANDBOX_* aliases), then command-line flags.
 * Each later source overrides the earlier ones field by field. */
#ifndef CELLA_CORE_CONFIG_H
#define CELLA_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define CFG_DEFAULT_LISTEN "127.0.0.1:7878"

typedef struct cfg_custom_image {
    char *name;             /* catalog key */
    char *rootfs;           /* absolute path of a root file-system directory */
} cfg_custom_image;

typedef struct cfg_image_cap {
    char *image;
    uint32_t max_cpus_milli;    /* 0: no cap */
    uint64_t max_memory_mb;     /* 0: no cap */
} cfg_image_cap;

typedef struct cella_config {
    /* where and how to serve */
    char *listen;                       /* "ADDR:PORT" ("[v6]:PORT" for IPv6) */
    char *state_dir;                    /* NULL: statedir_default_path() */
    char *tokens_file;                  /* NULL: no tokens */
    char *config_file;                  /* the file read, if any (for messages) */

    /* iii-sandbox's fields */
    char **image_allowlist;             /* NULL-terminated; NULL when the file did not set it */
    char **allowed_origins;             /* browser Origins let in ("*": any); NULL: none */
    bool allowlist_set;                 /* set (possibly to []): fail closed on it */
    cfg_custom_image *custom_images;    /* sorted by name */
    size_t n_custom_images;
    cfg_image_cap *per_image_caps;
    size_t n_image_caps;
    uint32_t max_concurrent_sandboxes;  /* 32 */
    uint32_t default_cpus_milli;        /* 1000 (default_cpus: 1) */
    uint64_t default_memory_mb;         /* 512 */
    uint64_t default_idle_timeout_secs; /* 300 */
    bool auto_install;                  /* accepted; cella pulls no images (yet) */

    /* cella's own */
    uint64_t max_exec_timeout_ms;       /* timeout_ms is clamped to this: 3600000 */
    uint64_t default_exec_timeout_ms;   /* 300000 */
    uint32_t max_execs_per_sandbox;     /* 4 */
    uint32_t pool_size;                 /* warm sandboxes kept per preset image: 2 */
    uint64_t max_body_bytes;            /* request bodies: 16 MiB */
    uint64_t output_limit_bytes;        /* per stream per exec: 1 MiB */
    uint32_t pids_max;                  /* processes per sandbox: 256 */
    uint32_t max_connections;           /* HTTP connections at once: 512 */
    uint32_t max_connections_per_ip;    /* from one client address: 128 */
    uint32_t max_sandboxes_per_tenant;  /* 0: only max_concurrent_sandboxes applies */
    uint64_t max_idle_timeout_secs;     /* idle_timeout_secs a request may ask for: 86400 */
    /* What file uploads (fs write, PUT, tar) may grow a workspace to: 4 GiB; 0: no quota */
    uint64_t workspace_quota_bytes;
    char *default_image;                /* SANDBOX_WORKER_IMAGE: "python" */
    /* the gateway dialect's sessions (the Code Sandbox defaults) */
    uint32_t gateway_max_sessions;      /* sessions open at once: 50 */
    uint64_t gateway_idle_timeout_secs; /* a session's sandbox is reaped after: 900 */
    uint64_t gateway_memory_mb;         /* a session's sandbox's memory: 512 */
    /* How long SIGTERM waits for running execs and transfers: 600; 0: no limit */
    uint64_t drain_timeout_secs;
    /* code mode (core/code_pool.h) */
    uint32_t code_workers;              /* worker processes kept running: 2 */
    uint32_t code_queue_max;            /* requests waiting for a worker: 64 */
    uint32_t code_max_paused_runs;      /* paused runs held at once: 256 */
    uint32_t code_max_paused_runs_per_tenant;   /* ... by one tenant: 0 (no cap of its own) */
    uint64_t code_run_ttl_secs;         /* a paused run is freed after: 300 */
    uint64_t code_resident_secs;        /* ... and moved out of its worker after: 60 */
    uint64_t code_max_time_ms;          /* the most limits.max_time_ms may ask: 60000 */
    uint64_t code_max_memory_mb;        /* the most limits.max_memory_bytes may ask, in MiB: 1024 */
} cella_config;

/* The embedded defaults (the values in the comments above). */
void config_init(cella_config *c);
void config_free(cella_config *c);
/* Reads a YAML file over c. The document is a mapping of the fields above by
 * their names (listen, state_dir, tokens_file and the others use the same
 * names as the struct, *_milli fields excepted: default_cpus is a number of
 * CPUs, possibly fractional). iii's nesting is accepted too: the fields may sit
 * under a top-level `config:` key, or under `sandbox:`. Unknown keys, wrong
 * types and out-of-range values fail with a message naming the key and line. */
int config_load_file(cella_config *c, const char *path, cella_err *err);
/* Same, from a string (tests, and the file reader). */
int config_load_yaml(cella_config *c, const char *text, size_t len, const char *origin,
                     cella_err *err);
/* The environment: CELLA_LISTEN, CELLA_STATE_DIR, CELLA_TOKENS_FILE, and the
 * gateway's SANDBOX_IDLE_TIMEOUT (seconds), SANDBOX_MEM_LIMIT (Docker form:
 * 512m, 1g, or bytes) (each sets the general default and the gateway_*
 * field alike), SANDBOX_MAX_SESSIONS (gateway_max_sessions only),
 * SANDBOX_WORKER_IMAGE;
 * SANDBOX_BACKEND must be unset, "docker" or "cella" (accepted, meaning cella);
 * SANDBOX_GPU_ENABLED=true fails (no GPU passthrough). getenv_fn is getenv in
 * production; tests pass their own. */
int config_load_env(cella_config *c, const char *(*getenv_fn)(const char *name), cella_err *err);
/* Checks the whole: listen parses, allowlist entries and per_image_caps name
 * known images (presets python, node, shell or custom_images keys), custom
 * image names are not presets and their rootfs is an absolute path, limits
 * are in range. */
int config_validate(const cella_config *c, cella_err *err);
/* True for the preset image names. */
bool config_is_preset(const char *name);
/* ADDR:PORT -> host (heap) and port; accepts 1.2.3.4:80, [::1]:80,
 * localhost:80. */
int config_parse_listen(const char *s, char **host, uint16_t *port, cella_err *err);

/* ---- tokens ------------------------------------------------------------ */

typedef struct cfg_token {
    char *token;
    char *tenant;
    bool admin;
} cfg_token;

typedef struct cfg_tokens {
    cfg_token *v;
    size_t n;
} cfg_tokens;

/* The tokens file: one token per line, `<token> <tenant> [admin]`, `#`
 * comments and blank lines ignored. Tokens are at least 16 characters of
 * [A-Za-z0-9._~+/=-], tenants [A-Za-z0-9._-]{1,64}; duplicates fail. */
int tokens_load_file(cfg_tokens *t, const char *path, cella_err *err);
int tokens_parse(cfg_tokens *t, const char *text, size_t len, const char *origin, cella_err *err);
void tokens_free(cfg_tokens *t);
/* Looks a bearer token up in constant time with respect to its contents
 * (every entry is compared in full), so timing tells nothing about how
 * close a guess was. NULL when unknown. */
const cfg_token *tokens_find(const cfg_tokens *t, const char *token);

#endif
