/* What must survive a restart, in SQLite (WAL) under the state directory:
 * the registry of sandboxes and the gateway's sessions. A sandbox's
 * processes do not survive; its record and its workspace do, and the
 * daemon starts it again from them. */
#ifndef CELLA_STORE_STORE_H
#define CELLA_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef struct store store;

typedef struct store_sandbox {
    char id[40];
    char *tenant;
    char *name;                   /* may be NULL */
    char *image;
    uint32_t cpus_milli;
    uint64_t memory_mb;
    uint64_t idle_timeout_secs;
    char **env;                   /* NULL-terminated "K=V" */
    int64_t created_at_ms;        /* unix time */
    int cap_class;                /* core_cap_class: the cap it counts against */
    int64_t last_used_at_ms;      /* unix time of the last call that touched it; 0: unknown */
} store_sandbox;

/* Opens (creating) <dir>/cella.db. */
int store_open(const char *dir, store **out, cella_err *err);
void store_close(store *s);
int store_put(store *s, const store_sandbox *sb, cella_err *err);
int store_delete(store *s, const char *id, cella_err *err);
/* Records when a sandbox was last used (its record's last_used_at_ms). */
int store_touch(store *s, const char *id, int64_t last_used_at_ms, cella_err *err);
/* Every record, oldest first. Free with store_sandbox_free on each, then cella_free(v). */
int store_list(store *s, store_sandbox **v, size_t *n, cella_err *err);
void store_sandbox_free(store_sandbox *sb);

/* The result cache of typed runs (core/typed_run.c): opaque values by a
 * 32-byte key. get: 1 with the value appended to out (and its use time set
 * to now_ms), 0 when absent, -1 on a database error. put: inserts or
 * replaces, then evicts the least recently used entries beyond max_entries
 * or beyond max_bytes of values in all. */
int store_cache_get(store *s, const uint8_t key[32], int64_t now_ms, cbuf *out, cella_err *err);
int store_cache_put(store *s, const uint8_t key[32], const void *v, size_t n, int64_t now_ms,
                    uint64_t max_entries, uint64_t max_bytes, cella_err *err);

/* ---- the gateway dialect's sessions (sessions.c) ---------------------------- */

/* A session: (tenant, session_id) mapped to the sandbox that serves it.
 * store_delete of that sandbox removes the session too. */
typedef struct store_session {
    char *tenant;
    char *session_id;
    char sandbox_id[40];
    int64_t created_at_ms;        /* unix time */
} store_session;

/* 1 and *out filled (free with store_session_free), 0 when there is no such
 * session, -1 on failure. */
int store_session_get(store *s, const char *tenant, const char *session_id, store_session *out,
                      cella_err *err);
/* Inserts or replaces the session's row. */
int store_session_put(store *s, const store_session *ss, cella_err *err);
/* Removes the session if it still maps to sandbox_id (NULL: whatever it
 * maps to), so a stale clean-up never removes a session made since. */
int store_session_delete(store *s, const char *tenant, const char *session_id,
                         const char *sandbox_id, cella_err *err);
/* Every session, by tenant then session_id. Free each with
 * store_session_free, then cella_free(v). */
int store_session_list(store *s, store_session **v, size_t *n, cella_err *err);
void store_session_free(store_session *ss);

#endif
