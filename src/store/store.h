/* What must survive a restart, in SQLite (WAL) under the state directory:
 * the registry of sandboxes. A sandbox's processes do not survive; its
 * record and its workspace do, and the daemon starts it again from them. */
#ifndef CELLA_STORE_STORE_H
#define CELLA_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

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
} store_sandbox;

/* Opens (creating) <dir>/cella.db. */
int store_open(const char *dir, store **out, cella_err *err);
void store_close(store *s);
int store_put(store *s, const store_sandbox *sb, cella_err *err);
int store_delete(store *s, const char *id, cella_err *err);
/* Every record, oldest first. Free with store_sandbox_free on each, then cella_free(v). */
int store_list(store *s, store_sandbox **v, size_t *n, cella_err *err);
void store_sandbox_free(store_sandbox *sb);

#endif
