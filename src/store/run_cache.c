/* The result cache of typed runs (core/typed_run.c): opaque values by a
 * SHA-256 key, with the time of their last use, which orders eviction. */
#include <stdint.h>

#include "store/store_int.h"

int store_cache_get(store *s, const uint8_t key[32], int64_t now_ms, cbuf *out, cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = NULL;
    int rc = -1, step;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM run_cache WHERE key = ?", -1, &st, NULL) !=
        SQLITE_OK) {
        store_db_err(s, err, "prepare cache lookup");
        goto out;
    }
    sqlite3_bind_blob(st, 1, key, 32, SQLITE_STATIC);
    step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
        rc = 0;
        goto out;
    }
    if (step != SQLITE_ROW) {
        store_db_err(s, err, "cache lookup");
        goto out;
    }
    const void *v = sqlite3_column_blob(st, 0);
    int n = sqlite3_column_bytes(st, 0);
    if (v && n > 0)
        cbuf_append(out, v, (size_t)n);
    sqlite3_finalize(st);
    st = NULL;
    /* The use time orders eviction; failing to bump it costs nothing else. */
    if (sqlite3_prepare_v2(s->db, "UPDATE run_cache SET used_at_ms = ? WHERE key = ?", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, now_ms);
        sqlite3_bind_blob(st, 2, key, 32, SQLITE_STATIC);
        sqlite3_step(st);
    }
    rc = 1;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int store_cache_put(store *s, const uint8_t key[32], const void *v, size_t n, int64_t now_ms,
                    uint64_t max_entries, uint64_t max_bytes, cella_err *err)
{
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (n > INT32_MAX) {
        cella_err_set(err, 0, "cache value too large");
        goto out;
    }
    if (sqlite3_prepare_v2(s->db,
                           "INSERT OR REPLACE INTO run_cache (key, value, size, used_at_ms) "
                           "VALUES (?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, err, "prepare cache insert");
        goto out;
    }
    sqlite3_bind_blob(st, 1, key, 32, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, n ? v : (const void *)"", (int)n, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)n);
    sqlite3_bind_int64(st, 4, now_ms);
    if (sqlite3_step(st) != SQLITE_DONE) {
        store_db_err(s, err, "cache insert");
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
    /* Newest use first: whatever lies past either bound goes. */
    if (sqlite3_prepare_v2(s->db,
                           "DELETE FROM run_cache WHERE key IN (SELECT key FROM ("
                           "  SELECT key, ROW_NUMBER() OVER w AS rn, SUM(size) OVER w AS total"
                           "  FROM run_cache WINDOW w AS (ORDER BY used_at_ms DESC, key))"
                           " WHERE rn > ? OR total > ?)",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, err, "prepare cache eviction");
        goto out;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)(max_entries > INT64_MAX ? INT64_MAX : max_entries));
    sqlite3_bind_int64(st, 2, (sqlite3_int64)(max_bytes > INT64_MAX ? INT64_MAX : max_bytes));
    if (sqlite3_step(st) != SQLITE_DONE) {
        store_db_err(s, err, "cache eviction");
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return rc;
}
