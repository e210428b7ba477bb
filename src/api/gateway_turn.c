/* One call at a time in a session: /execute and /bash of one session run
 * one after the other, as commands typed into one shell do.
 *
 * Why: a call's artifacts are the files under /workspace/artifacts that
 * changed between a listing just before it and one just after it. Two
 * calls of one session running at once would each see the other's files
 * change in that window and claim them. Serialising the calls makes the
 * attribution exact (nothing else of the session's runs in the window but
 * what the call itself started, and what earlier calls left running in
 * the background), and it is what a session promises anyway: one shell.
 *
 * A call waits for the one before it, but never longer than its own
 * timeout: the time it waits is taken from its timeout, so the answer
 * still comes within timeout_s. The file routes (/read, /write, ...) do
 * not wait; they may run beside a call. */
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "api/gateway_int.h"
#include "util/alloc.h"
#include "util/fdio.h"

/* A session a call is running in, and the calls waiting for their turn. */
typedef struct turn {
    char *tenant, *session_id;
    bool busy;
    unsigned waiters;
} turn;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* On CLOCK_MONOTONIC (cond_init): a wait's end is an absolute time, and
 * on the default clock, the wall clock, a step back (NTP, an operator's
 * `date -s`) while a call waited stretched the wait by the step, past the
 * call's own timeout, since nothing checked the deadline meanwhile. */
static pthread_cond_t freed;
static pthread_once_t freed_once = PTHREAD_ONCE_INIT;

static void cond_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&freed, &ca);
    pthread_condattr_destroy(&ca);
}
static turn *turns;
static size_t n_turns, cap_turns;

/* A waiter wakes this often at least, to notice its deadline and a client
 * that hung up (a broadcast wakes it sooner). */
#define TURN_SLICE_MS 200

/* Called with mu held. */
static turn *find(const char *tenant, const char *sid, bool add)
{
    for (size_t i = 0; i < n_turns; i++)
        if (!strcmp(turns[i].tenant, tenant) && !strcmp(turns[i].session_id, sid))
            return &turns[i];
    if (!add)
        return NULL;
    if (n_turns == cap_turns) {
        cap_turns = cap_turns ? cap_turns * 2 : 8;
        turns = cella_realloc(turns, cap_turns * sizeof(*turns));
    }
    turns[n_turns] = (turn){cella_strdup(tenant), cella_strdup(sid), false, 0};
    return &turns[n_turns++];
}

/* Forgets a session nobody runs in or waits for. Called with mu held. */
static void drop_if_idle(turn *t)
{
    if (t->busy || t->waiters)
        return;
    cella_free(t->tenant);
    cella_free(t->session_id);
    *t = turns[--n_turns];
    if (!n_turns) {
        cella_free(turns);
        turns = NULL;
        cap_turns = 0;
    }
}

static bool client_gone(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

int gw_turn_take(http_ctx *c, const char *tenant, const char *sid, int64_t deadline_ns)
{
    pthread_once(&freed_once, cond_init);
    pthread_mutex_lock(&mu);
    turn *t = find(tenant, sid, true);
    while (t->busy) {
        if (clock_now_ns() >= deadline_ns || client_gone(c->client_fd)) {
            drop_if_idle(t);
            pthread_mutex_unlock(&mu);
            return -1;
        }
        t->waiters++;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += TURN_SLICE_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&freed, &mu, &ts);
        /* The array may have moved while we slept. */
        t = find(tenant, sid, true);
        t->waiters--;
    }
    t->busy = true;
    pthread_mutex_unlock(&mu);
    return 0;
}

void gw_turn_give(const char *tenant, const char *sid)
{
    pthread_once(&freed_once, cond_init);
    pthread_mutex_lock(&mu);
    turn *t = find(tenant, sid, false);
    if (t) {
        t->busy = false;
        drop_if_idle(t);
    }
    pthread_cond_broadcast(&freed);
    pthread_mutex_unlock(&mu);
}
