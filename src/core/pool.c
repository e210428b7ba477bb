/* The warm pool: sandboxes started ahead of time with the default limits,
 * so a create (or a one-shot run) takes one that is ready instead of paying
 * for namespaces, cgroups and the agent's set-up, and the network namespace
 * (the slowest part, with a long tail) is already made. Every preset is the
 * host image, so one pool serves them all. A filler thread keeps it full. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "core/core_int.h"
#include "util/alloc.h"
#include "util/log.h"

/* After a failed start, wait before trying again (a host out of resources
 * must not be hammered). */
#define POOL_RETRY_MS 1000

static bool box_alive(const box *b)
{
    struct pollfd p = {.fd = b->pidfd, .events = POLLIN};
    return poll(&p, 1, 0) == 0;
}

static void *pool_main(void *arg)
{
    core *c = arg;
    const cella_config *cfg = c->cfg;
    cg_limits lim;
    core_limits(c, cfg->default_cpus_milli, cfg->default_memory_mb, &lim);
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->closing && c->pool_n >= cfg->pool_size) {
            c->ready = true;
            pthread_cond_wait(&c->pool_cv, &c->mu);
        }
        if (c->closing)
            break;
        pthread_mutex_unlock(&c->mu);
        box *b;
        int ws_fd;
        cella_err err;
        int rc = core_start_box(c, NULL, NULL, &lim, true, &b, &ws_fd, &err);
        pthread_mutex_lock(&c->mu);
        if (rc < 0) {
            log_warn("warm pool: %s", err.msg);
            /* Ready all the same: creates start their own sandboxes. */
            c->ready = true;
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += POOL_RETRY_MS / 1000;
            pthread_cond_timedwait(&c->pool_cv, &c->mu, &ts);
            continue;
        }
        if (c->closing) {
            pthread_mutex_unlock(&c->mu);
            core_discard_box(c, b, ws_fd);
            pthread_mutex_lock(&c->mu);
            break;
        }
        c->pool[c->pool_n++] = (pool_entry){b, ws_fd};
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

void pool_start(core *c)
{
    if (c->cfg->pool_size == 0) {
        c->ready = true;
        return;
    }
    c->pool = cella_calloc(c->cfg->pool_size, sizeof(*c->pool));
    if (pthread_create(&c->pool_thread, NULL, pool_main, c) != 0) {
        log_warn("warm pool: cannot start its thread: %s", strerror(errno));
        c->ready = true;
        return;
    }
    c->pool_started = true;
}

void pool_stop(core *c)
{
    pthread_mutex_lock(&c->mu);
    c->closing = true;
    pthread_cond_broadcast(&c->pool_cv);
    pthread_mutex_unlock(&c->mu);
    if (c->pool_started)
        pthread_join(c->pool_thread, NULL);
    c->pool_started = false;
    for (size_t i = 0; i < c->pool_n; i++)
        core_discard_box(c, c->pool[i].b, c->pool[i].ws_fd);
    c->pool_n = 0;
    cella_free(c->pool);
    c->pool = NULL;
}

bool pool_take(core *c, box **b, int *ws_fd)
{
    for (;;) {
        pthread_mutex_lock(&c->mu);
        if (c->pool_n == 0) {
            pthread_mutex_unlock(&c->mu);
            return false;
        }
        /* Oldest first, so none sits idle for ever. */
        pool_entry e = c->pool[0];
        memmove(&c->pool[0], &c->pool[1], (c->pool_n - 1) * sizeof(*c->pool));
        c->pool_n--;
        pthread_cond_signal(&c->pool_cv);
        pthread_mutex_unlock(&c->mu);
        if (box_alive(e.b)) {
            *b = e.b;
            *ws_fd = e.ws_fd;
            return true;
        }
        log_warn("warm sandbox %s died while waiting; discarded", e.b->id.str);
        core_discard_box(c, e.b, e.ws_fd);
    }
}
