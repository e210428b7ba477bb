/* The gateway dialect's sessions: (tenant, session_id) -> sandbox id, in
 * the table migration 2 made. The sandbox's own record (store.c) is what
 * brings it back after a restart; this row is what finds it again. */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "util/alloc.h"

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return cella_strdup(t ? (const char *)t : "");
}

static void row(sqlite3_stmt *st, store_session *out)
{
    memset(out, 0, sizeof(*out));
    out->tenant = col_dup(st, 0);
    out->session_id = col_dup(st, 1);
    const unsigned char *id = sqlite3_column_text(st, 2);
    snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", id ? (const char *)id : "");
    out->created_at_ms = sqlite3_column_int64(st, 3);
}

int store_session_get(store *s, const char *tenant, const char *session_id, store_session *out,
                      cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = NULL;
    int rc = -1, step;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT tenant, session_id, sandbox_id, created_at_ms "
                           "FROM gateway_sessions WHERE tenant = ? AND session_id = ?",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, err, "prepare session lookup");
        goto out;
    }
    sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, session_id, -1, SQLITE_STATIC);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        row(st, out);
        rc = 1;
    } else if (step == SQLITE_DONE) {
        rc = 0;
    } else {
        store_db_err(s, err, "session lookup");
    }
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int store_session_put(store *s, const store_session *ss, cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT OR REPLACE INTO gateway_sessions "
                           "(tenant, session_id, sandbox_id, created_at_ms) VALUES (?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, err, "prepare session insert");
        goto out;
    }
    sqlite3_bind_text(st, 1, ss->tenant, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, ss->session_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, ss->sandbox_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, ss->created_at_ms);
    if (sqlite3_step(st) != SQLITE_DONE) {
        store_db_err(s, err, "session insert");
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int store_session_delete(store *s, const char *tenant, const char *session_id,
                         const char *sandbox_id, cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(s->db,
                           "DELETE FROM gateway_sessions WHERE tenant = ?1 AND session_id = ?2 "
                           "AND (?3 IS NULL OR sandbox_id = ?3)",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, err, "prepare session delete");
        goto out;
    }
    sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, session_id, -1, SQLITE_STATIC);
    if (sandbox_id)
        sqlite3_bind_text(st, 3, sandbox_id, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    if (sqlite3_step(st) != SQLITE_DONE) {
        store_db_err(s, err, "session delete");
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int store_session_list(store *s, store_session **out, size_t *n_out, cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = NULL;
    store_session *v = NULL;
    size_t n = 0, cap = 0;
    int rc = -1, step;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT tenant, session_id, sandbox_id, created_at_ms "
                           "FROM gateway_sessions ORDER BY tenant, session_id",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, err, "prepare session list");
        goto out;
    }
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            v = cella_realloc(v, cap * sizeof(*v));
        }
        row(st, &v[n++]);
    }
    if (step != SQLITE_DONE) {
        store_db_err(s, err, "session list");
        for (size_t i = 0; i < n; i++)
            store_session_free(&v[i]);
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

void store_session_free(store_session *ss)
{
    cella_free(ss->tenant);
    cella_free(ss->session_id);
    memset(ss, 0, sizeof(*ss));
}
