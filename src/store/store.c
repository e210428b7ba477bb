#include "store/store.h"

#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "util/alloc.h"
#include "util/buf.h"

/* The schema grows by migrations: migrations[i] takes a database from
 * version i (PRAGMA user_version) to i + 1, in one transaction with the
 * version bump, so a crash leaves it at one version or the next. A new
 * table or column is a new entry at the end; entries are never edited
 * once released, since databases at every version exist. */
static const char *const migrations[] = {
    /* 1: the registry. env is stored as its entries joined by NUL bytes
     * (a blob): an entry can hold any byte but NUL, which no environment
     * can. (Version 1 databases were created with IF NOT EXISTS too.) */
    "CREATE TABLE IF NOT EXISTS sandboxes ("
    "  id TEXT PRIMARY KEY,"
    "  tenant TEXT NOT NULL,"
    "  name TEXT,"
    "  image TEXT NOT NULL,"
    "  cpus_milli INTEGER NOT NULL,"
    "  memory_mb INTEGER NOT NULL,"
    "  idle_timeout_secs INTEGER NOT NULL,"
    "  env BLOB,"
    "  created_at_ms INTEGER NOT NULL);",
    /* 2: the gateway dialect's sessions (store/sessions.c). */
    "CREATE TABLE gateway_sessions ("
    "  tenant TEXT NOT NULL,"
    "  session_id TEXT NOT NULL,"
    "  sandbox_id TEXT NOT NULL,"
    "  created_at_ms INTEGER NOT NULL,"
    "  PRIMARY KEY (tenant, session_id));"
    "CREATE INDEX gateway_sessions_sandbox ON gateway_sessions (sandbox_id);",
    /* 3: the result cache of typed runs (run_cache.c). */
    "CREATE TABLE run_cache ("
    "  key BLOB PRIMARY KEY,"
    "  value BLOB NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  used_at_ms INTEGER NOT NULL);",
    /* 4: the cap each sandbox counts against (core_cap_class: 0 the
     * sandboxes', 1 the gateway's sessions'). The sandboxes that serve a
     * session are the sessions' from now on. */
    "ALTER TABLE sandboxes ADD COLUMN cap_class INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sandboxes SET cap_class = 1 "
    "  WHERE id IN (SELECT sandbox_id FROM gateway_sessions);",
    /* 5: a session's sandbox belongs to the session's tenant (an admin
     * acting for another tenant used to own it). */
    "UPDATE sandboxes SET tenant = "
    "  (SELECT g.tenant FROM gateway_sessions g WHERE g.sandbox_id = sandboxes.id) "
    "  WHERE id IN (SELECT sandbox_id FROM gateway_sessions);",
    /* 6: when each sandbox was last used, so a listing after a restart
     * still says (0: not known; written every reaper pass and at close). */
    "ALTER TABLE sandboxes ADD COLUMN last_used_at_ms INTEGER NOT NULL DEFAULT 0;",
};
#define N_MIGRATIONS (int)(sizeof(migrations) / sizeof(migrations[0]))

static int db_err(store *s, cella_err *err, const char *what)
{
    return cella_err_set(err, 0, "state database: %s: %s", what, sqlite3_errmsg(s->db));
}

int store_db_err(store *s, cella_err *err, const char *what)
{
    return db_err(s, err, what);
}

static int user_version(store *s, int *v, cella_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return db_err(s, err, "read the schema version");
    }
    *v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return 0;
}

static int migrate(store *s, cella_err *err)
{
    int v = 0;
    if (user_version(s, &v, err) < 0)
        return -1;
    /* A newer cella's database: its tables may mean things this one would
     * get wrong, so it is not touched. */
    if (v > N_MIGRATIONS)
        return cella_err_set(err, 0, "state database: schema version %d is newer than this "
                             "cella knows (%d); run a newer cella", v, N_MIGRATIONS);
    for (; v < N_MIGRATIONS; v++) {
        char bump[48];
        snprintf(bump, sizeof(bump), "PRAGMA user_version=%d;", v + 1);
        if (sqlite3_exec(s->db, "BEGIN IMMEDIATE;", NULL, NULL, NULL) != SQLITE_OK)
            return db_err(s, err, "begin a migration");
        if (sqlite3_exec(s->db, migrations[v], NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(s->db, bump, NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(s->db, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK) {
            char what[48];
            snprintf(what, sizeof(what), "migrate to version %d", v + 1);
            db_err(s, err, what);
            sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
            return -1;
        }
    }
    return 0;
}

int store_open(const char *dir, store **out, cella_err *err)
{
    store *s = cella_calloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    char *path = cella_asprintf("%s/cella.db", dir);
    int rc = sqlite3_open_v2(path, &s->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    cella_free(path);
    if (rc != SQLITE_OK) {
        cella_err_set(err, 0, "open the state database in %s: %s", dir,
                      s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        store_close(s);
        return -1;
    }
    /* A busy database (another process checkpointing) is waited for, briefly. */
    sqlite3_busy_timeout(s->db, 5000);
    if (sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL,
                     NULL) != SQLITE_OK) {
        db_err(s, err, "set the journal mode");
        store_close(s);
        return -1;
    }
    if (migrate(s, err) < 0) {
        store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void store_close(store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    cella_free(s);
}

int store_put(store *s, const store_sandbox *sb, cella_err *err)
{
    cbuf env;
    cbuf_init(&env);
    for (size_t i = 0; sb->env && sb->env[i]; i++)
        cbuf_append(&env, sb->env[i], strlen(sb->env[i]) + 1);
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT OR REPLACE INTO sandboxes (id, tenant, name, image, cpus_milli, "
                           "memory_mb, idle_timeout_secs, env, created_at_ms, cap_class, "
                           "last_used_at_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        db_err(s, err, "prepare insert");
        goto out;
    }
    sqlite3_bind_text(st, 1, sb->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sb->tenant, -1, SQLITE_STATIC);
    if (sb->name)
        sqlite3_bind_text(st, 3, sb->name, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_text(st, 4, sb->image, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, sb->cpus_milli);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)sb->memory_mb);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)sb->idle_timeout_secs);
    sqlite3_bind_blob(st, 8, env.data ? cbuf_head(&env) : (const void *)"", (int)cbuf_avail(&env),
                      SQLITE_STATIC);
    sqlite3_bind_int64(st, 9, sb->created_at_ms);
    sqlite3_bind_int(st, 10, sb->cap_class);
    sqlite3_bind_int64(st, 11, sb->last_used_at_ms);
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_err(s, err, "insert");
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    cbuf_free(&env);
    return rc;
}

/* One statement with id bound to ?1 and, when num is not NULL, *num to
 * ?2, run to the end. Called with mu held. */
static int run_by_id(store *s, const char *sql, const char *id, const int64_t *num,
                     const char *what, cella_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_err(s, err, what);
        goto out;
    }
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (num)
        sqlite3_bind_int64(st, 2, *num);
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_err(s, err, what);
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

int store_delete(store *s, const char *id, cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    /* A gateway session ends with its sandbox (stopped, or reaped idle):
     * the session's row goes in the same step, so no listing shows it. */
    int rc = run_by_id(s, "DELETE FROM sandboxes WHERE id = ?1", id, NULL, "delete", err);
    if (rc == 0)
        rc = run_by_id(s, "DELETE FROM gateway_sessions WHERE sandbox_id = ?1", id, NULL,
                       "delete", err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int store_touch(store *s, const char *id, int64_t last_used_at_ms, cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    int rc = run_by_id(s, "UPDATE sandboxes SET last_used_at_ms = ?2 WHERE id = ?1", id,
                       &last_used_at_ms, "touch", err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? cella_strdup((const char *)t) : NULL;
}

static char **split_env(const void *blob, int n)
{
    size_t count = 0;
    const char *p = blob;
    for (int i = 0; i < n; i++)
        if (p[i] == '\0')
            count++;
    char **v = cella_calloc(count + 1, sizeof(char *));
    size_t k = 0;
    for (int i = 0; i < n && k < count;) {
        size_t l = strnlen(p + i, (size_t)(n - i));
        v[k++] = cella_strndup(p + i, l);
        i += (int)l + 1;
    }
    return v;
}

int store_list(store *s, store_sandbox **out, size_t *n_out, cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = NULL;
    size_t n = 0, cap = 0;
    store_sandbox *v = NULL;
    int rc = -1, step;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT id, tenant, name, image, cpus_milli, memory_mb, "
                           "idle_timeout_secs, env, created_at_ms, cap_class, last_used_at_ms "
                           "FROM sandboxes "
                           "ORDER BY created_at_ms, id",
                           -1, &st, NULL) != SQLITE_OK) {
        db_err(s, err, "prepare list");
        goto out;
    }
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            v = cella_realloc(v, cap * sizeof(*v));
        }
        store_sandbox *sb = &v[n++];
        memset(sb, 0, sizeof(*sb));
        const unsigned char *id = sqlite3_column_text(st, 0);
        snprintf(sb->id, sizeof(sb->id), "%s", id ? (const char *)id : "");
        sb->tenant = col_text(st, 1);
        sb->name = col_text(st, 2);
        sb->image = col_text(st, 3);
        sb->cpus_milli = (uint32_t)sqlite3_column_int64(st, 4);
        sb->memory_mb = (uint64_t)sqlite3_column_int64(st, 5);
        sb->idle_timeout_secs = (uint64_t)sqlite3_column_int64(st, 6);
        sb->env = split_env(sqlite3_column_blob(st, 7), sqlite3_column_bytes(st, 7));
        sb->created_at_ms = sqlite3_column_int64(st, 8);
        sb->cap_class = sqlite3_column_int(st, 9);
        sb->last_used_at_ms = sqlite3_column_int64(st, 10);
        if (!sb->tenant)
            sb->tenant = cella_strdup("default");
        if (!sb->image)
            sb->image = cella_strdup("shell");
    }
    if (step != SQLITE_DONE) {
        db_err(s, err, "list");
        for (size_t i = 0; i < n; i++)
            store_sandbox_free(&v[i]);
        cella_free(v);
        goto out;
    }
    *out = v;
    *n_out = n;
    rc = 0;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void store_sandbox_free(store_sandbox *sb)
{
    cella_free(sb->tenant);
    cella_free(sb->name);
    cella_free(sb->image);
    cella_strv_free(sb->env);
    memset(sb, 0, sizeof(*sb));
}

