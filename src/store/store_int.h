/* The store's internals, shared by its files: store.c (the database, its
 * migrations, the registry), sessions.c (the gateway's sessions) and
 * run_cache.c (the result cache of typed runs). */
#ifndef CELLA_STORE_STORE_INT_H
#define CELLA_STORE_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "store/store.h"

struct store {
    sqlite3 *db;
    pthread_mutex_t mu;           /* one statement at a time on the connection */
};

/* "state database: <what>: <sqlite's message>" into err; returns -1. */
int store_db_err(store *s, cella_err *err, const char *what);

#endif
