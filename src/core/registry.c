/* The registry: live sandboxes by id, their life from create to stop, the
 * store that lets them survive a restart, and the idle reaper. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "box/image_host.h"
#include "box/workspace.h"
#include "core/code_pool.h"
#include "core/core_int.h"
#include "util/alloc.h"
#include "util/fdio.h"
#include "util/log.h"
#include "util/rmtree.h"

#define REAP_INTERVAL_MS 10000

int64_t core_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void core_limits(const core *c, uint32_t cpus_milli, uint64_t memory_mb, cg_limits *lim)
{
    lim->cpu_milli = cpus_milli;
    lim->memory_bytes = memory_mb << 20;
    lim->pids_max = c->cfg->pids_max;
}

const char *core_image_rootfs(core *c, const char *image)
{
    const core_image *im = catalog_find(c, image);
    return im && !strcmp(im->kind, "custom") ? im->ref : NULL;
}

int core_start_box(core *c, const cella_id *want, const char *rootfs, const cg_limits *lim,
                   bool fresh_workspace, box **out, int *ws_fd, cella_err *err)
{
    cella_id id;
    if (want)
        id = *want;
    else if (cella_id_new(c->rt->sd.node_key, &id, err) < 0)
        return -1;
    int fd = -1;
    if (!fresh_workspace) {
        fd = openat(c->rt->workspaces_fd, id.str, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT)
            return cella_err_set(err, errno, "open the workspace of %s", id.str);
        if (fd < 0)
            log_warn("sandbox %s: its workspace is gone; it restarts with an empty one", id.str);
    }
    if (fd < 0 && workspace_create(c->rt, id.str, &fd, err) < 0)
        return -1;
    box_spec spec;
    box_spec_init(&spec);
    spec.limits = *lim;
    spec.rootfs = rootfs;
    spec.workspace_dirfd = fd;
    spec.id = &id;
    if (box_create(c->rt, &spec, out, err) < 0) {
        close(fd);
        if (fresh_workspace)
            workspace_remove(c->rt, id.str, NULL);
        return -1;
    }
    *ws_fd = fd;
    return 0;
}

void core_discard_box(core *c, box *b, int ws_fd)
{
    char id[40];
    snprintf(id, sizeof(id), "%s", b->id.str);
    box_destroy(b);
    if (ws_fd >= 0)
        close(ws_fd);
    cella_err err;
    if (workspace_remove(c->rt, id, &err) < 0)
        log_warn("sandbox %s: remove its workspace: %s", id, err.msg);
}

/* ---- sandbox objects ------------------------------------------------------ */

const char *sandbox_id(const sandbox *s)
{
    return s->id.str;
}

void sandbox_ref(sandbox *s)
{
    pthread_mutex_lock(&s->c->mu);
    s->refs++;
    pthread_mutex_unlock(&s->c->mu);
}

static void sandbox_free(sandbox *s)
{
    mux_free(s->mux);
    cella_free(s->tenant);
    cella_free(s->name);
    cella_free(s->image);
    cella_strv_free(s->env);
    cella_free(s);
}

void sandbox_unref(sandbox *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->c->mu);
    bool last = --s->refs == 0;
    pthread_mutex_unlock(&s->c->mu);
    if (last)
        sandbox_free(s);
}

void sandbox_touch(sandbox *s)
{
    pthread_mutex_lock(&s->c->mu);
    s->last_used_ns = clock_now_ns();
    pthread_mutex_unlock(&s->c->mu);
}

/* Called by the sandbox's reader thread when its agent dies on its own. */
static void on_death(void *arg, const char *why)
{
    sandbox *s = arg;
    pthread_mutex_lock(&s->c->mu);
    s->dead = true;
    snprintf(s->dead_reason, sizeof(s->dead_reason), "%s", why);
    pthread_mutex_unlock(&s->c->mu);
    log_warn("event=sandbox_died sandbox=%s reason=\"%s\"", s->id.str, why);
}

static sandbox *sandbox_new(core *c, const store_sandbox *rec)
{
    sandbox *s = cella_calloc(1, sizeof(*s));
    s->c = c;
    snprintf(s->id.str, sizeof(s->id.str), "%.36s", rec->id);
    s->tenant = cella_strdup(rec->tenant);
    s->name = rec->name ? cella_strdup(rec->name) : NULL;
    s->image = cella_strdup(rec->image);
    s->cpus_milli = rec->cpus_milli;
    s->memory_mb = rec->memory_mb;
    s->idle_timeout_secs = rec->idle_timeout_secs;
    size_t ne = cella_strv_len(rec->env);
    s->env = cella_calloc(ne + 1, sizeof(char *));
    for (size_t i = 0; i < ne; i++)
        s->env[i] = cella_strdup(rec->env[i]);
    s->created_at_ms = rec->created_at_ms;
    s->last_used_ns = clock_now_ns();
    /* A restart restarts the idle clock (a sandbox is never reaped for the
     * time the daemon was down); the last use shown stays the real one. */
    s->start_used_ns = s->saved_used_ns = s->last_used_ns;
    s->restored_used_ms = rec->last_used_at_ms;
    s->ws_fd = -1;
    s->cap_class = rec->cap_class == CORE_CAP_SESSION ? CORE_CAP_SESSION : CORE_CAP_SANDBOX;
    s->refs = 1;                  /* the registry's */
    return s;
}

static int attach(sandbox *s, box *b, int ws_fd, cella_err *err)
{
    s->b = b;
    s->ws_fd = ws_fd;
    return mux_attach(b, on_death, s, &s->mux, err);
}

/* Kills everything of a sandbox already out of the registry. */
static void teardown(core *c, sandbox *s)
{
    mux_detach(s->mux);
    if (s->b)
        core_discard_box(c, s->b, s->ws_fd);
    else if (s->ws_fd >= 0)
        close(s->ws_fd);
    s->b = NULL;
    s->ws_fd = -1;
    cella_err err;
    if (s->persisted && store_delete(c->st, s->id.str, &err) < 0) {
        log_error("sandbox %s: its record stays until it can be deleted: %s", s->id.str, err.msg);
        pthread_mutex_lock(&c->mu);
        if (c->n_undeleted == c->cap_undeleted) {
            c->cap_undeleted = c->cap_undeleted ? c->cap_undeleted * 2 : 8;
            c->undeleted = cella_realloc(c->undeleted, c->cap_undeleted * sizeof(*c->undeleted));
        }
        snprintf(c->undeleted[c->n_undeleted++], CELLA_ID_LEN + 1, "%s", s->id.str);
        pthread_mutex_unlock(&c->mu);
    }
}

/* A stop answered "stopped" even when its record could not be deleted
 * (SQLite needs room in the state directory even to delete): the sandbox
 * is gone, but its record would restart it at the next start, with an
 * empty workspace. Such deletes are tried again here, until the disk has
 * room; a daemon killed before that still brings them back. */
static void retry_deletes(core *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->n_undeleted;
    char (*v)[CELLA_ID_LEN + 1] = cella_calloc(n ? n : 1, sizeof(*v));
    if (n)
        memcpy(v, c->undeleted, n * sizeof(*v));
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++) {
        cella_err err;
        if (store_delete(c->st, v[i], &err) < 0)
            continue;
        log_info("event=record_deleted sandbox=%s", v[i]);
        pthread_mutex_lock(&c->mu);
        for (size_t k = 0; k < c->n_undeleted; k++)
            if (!strcmp(c->undeleted[k], v[i])) {
                memmove(c->undeleted[k], c->undeleted[--c->n_undeleted], sizeof(v[0]));
                break;
            }
        pthread_mutex_unlock(&c->mu);
    }
    cella_free(v);
}

static void registry_add(core *c, sandbox *s)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->v = cella_realloc(c->v, c->cap * sizeof(*c->v));
    }
    c->v[c->n++] = s;
}

static void registry_remove(core *c, sandbox *s)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i] == s) {
            memmove(&c->v[i], &c->v[i + 1], (c->n - i - 1) * sizeof(*c->v));
            c->n--;
            return;
        }
}

static sandbox *registry_find(core *c, const char *id)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i]->id.str, id))
            return c->v[i];
    return NULL;
}

static unsigned live_count(core *c)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!c->v[i]->dead)
            n++;
    return n;
}

/* ---- create, get, list, stop ---------------------------------------------- */

static const cfg_image_cap *find_cap(const cella_config *cfg, const char *image)
{
    for (size_t i = 0; i < cfg->n_image_caps; i++)
        if (!strcmp(cfg->per_image_caps[i].image, image))
            return &cfg->per_image_caps[i];
    return NULL;
}

/* Sandboxes a tenant holds or is creating. Called with mu held. */
static unsigned tenant_count(core *c, const char *tenant)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i]->tenant, tenant))
            n++;
    for (unsigned i = 0; i < c->creating; i++)
        if (!strcmp(c->creating_v[i].tenant, tenant))
            n++;
    return n;
}

/* The places of a cap class taken: its sandboxes in the registry (dead ones
 * too), its creates under way and its stops still tearing down, since each
 * holds a cgroup, a workspace and descriptors until it is gone. Called
 * with mu held. */
static unsigned class_held(core *c, core_cap_class cls)
{
    unsigned n = c->teardowns_by[cls];
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i]->cap_class == cls)
            n++;
    for (unsigned i = 0; i < c->creating; i++)
        if (c->creating_v[i].cls == cls)
            n++;
    return n;
}

/* Takes a create slot for tenant. Called with mu held. */
static void reserve_locked(core *c, const char *tenant, core_cap_class cls)
{
    if (c->creating == c->creating_cap) {
        c->creating_cap = c->creating_cap ? c->creating_cap * 2 : 16;
        c->creating_v = cella_realloc(c->creating_v, c->creating_cap * sizeof(*c->creating_v));
    }
    c->creating_v[c->creating++] = (struct core_slot){cella_strdup(tenant), cls};
}

/* Gives a create slot back. Called with mu held. */
static void unreserve_locked(core *c, const char *tenant, core_cap_class cls)
{
    for (unsigned i = 0; i < c->creating; i++)
        if (c->creating_v[i].cls == cls && !strcmp(c->creating_v[i].tenant, tenant)) {
            cella_free(c->creating_v[i].tenant);
            c->creating_v[i] = c->creating_v[--c->creating];
            return;
        }
}

static void unreserve(core *c, const char *tenant, core_cap_class cls)
{
    pthread_mutex_lock(&c->mu);
    unreserve_locked(c, tenant, cls);
    pthread_mutex_unlock(&c->mu);
}

static int create_checked(core *c, const char *tenant, const core_create_req *r, sandbox **out,
                          core_error *e, bool *reserved);

int core_create(core *c, const char *tenant, const core_create_req *r, sandbox **out, core_error *e)
{
    const cella_config *cfg = c->cfg;
    core_cap_class cls = r->cap_class == CORE_CAP_SESSION ? CORE_CAP_SESSION : CORE_CAP_SANDBOX;
    unsigned max = cls == CORE_CAP_SESSION ? cfg->gateway_max_sessions
                                           : cfg->max_concurrent_sandboxes;
    /* The slot is taken under the lock, before the sandbox exists, so
     * concurrent creates cannot all pass the check. Dead sandboxes and
     * background stops count: they hold a cgroup, a workspace and
     * descriptors until they are gone. */
    pthread_mutex_lock(&c->mu);
    bool draining = c->draining;
    unsigned held = class_held(c, cls);
    bool full = held >= max;
    /* One tenant cannot take every slot when the operator says so. */
    unsigned mine = cfg->max_sandboxes_per_tenant ? tenant_count(c, tenant) : 0;
    bool tenant_full = cfg->max_sandboxes_per_tenant && mine >= cfg->max_sandboxes_per_tenant;
    if (!draining && !full && !tenant_full)
        reserve_locked(c, tenant, cls);
    pthread_mutex_unlock(&c->mu);
    if (draining)
        return core_fail(e, S301, "the daemon is shutting down");
    if (full || tenant_full) {
        if (full && cls == CORE_CAP_SESSION) {
            core_fail(e, S400, "resource limit exceeded: %u sessions are open, being made or "
                               "being stopped, the most there may be (gateway_max_sessions is "
                               "%u)", held, max);
            e->fix_note = "reuse a session, end one, or wait for idle ones to be cleaned up";
        } else if (full)
            core_fail(e, S400, "resource limit exceeded: %u sandboxes are live or being stopped "
                               "(max_concurrent_sandboxes)", held);
        else
            core_fail(e, S400, "resource limit exceeded: tenant %s has %u sandboxes "
                               "(max_sandboxes_per_tenant)", tenant, mine);
        e->http_status = 429;
        return -1;
    }
    bool reserved = true;
    int rc = create_checked(c, tenant, r, out, e, &reserved);
    if (reserved)
        unreserve(c, tenant, cls);
    return rc;
}

static int create_checked(core *c, const char *tenant, const core_create_req *r, sandbox **out,
                          core_error *e, bool *reserved)
{
    const cella_config *cfg = c->cfg;
    const core_image *im = catalog_check(c, r->image, e);
    if (!im)
        return -1;
    uint32_t cpus = r->has_cpus ? r->cpus_milli : cfg->default_cpus_milli;
    uint64_t mem = r->has_memory ? r->memory_mb : cfg->default_memory_mb;
    const cfg_image_cap *cap = find_cap(cfg, im->name);
    if (cap && cap->max_cpus_milli && cpus > cap->max_cpus_milli) {
        core_fail(e, S400, "resource limit exceeded: cpus %.3g is over the cap of %.3g for image '%s'",
                  cpus / 1000.0, cap->max_cpus_milli / 1000.0, im->name);
        e->http_status = 400;
        return -1;
    }
    if (cap && cap->max_memory_mb && mem > cap->max_memory_mb) {
        core_fail(e, S400,
                  "resource limit exceeded: memory_mb %llu is over the cap of %llu for image '%s'",
                  (unsigned long long)mem, (unsigned long long)cap->max_memory_mb, im->name);
        e->http_status = 400;
        return -1;
    }
    if (!catalog_available(im))
        return core_fail(e, S101, "image files missing for '%s' (%s not found)", im->name,
                         im->interpreter ? im->interpreter : im->ref);
    if (r->has_idle && r->idle_timeout_secs > cfg->max_idle_timeout_secs) {
        core_fail(e, S400, "resource limit exceeded: idle_timeout_secs %llu is over the maximum "
                           "of %llu (max_idle_timeout_secs)",
                  (unsigned long long)r->idle_timeout_secs,
                  (unsigned long long)cfg->max_idle_timeout_secs);
        e->http_status = 400;
        return -1;
    }
    if (r->network) {
        core_fail(e, S001, "invalid request: network: sandboxes with a network are not available "
                           "yet; every sandbox has only its own loopback");
        core_fix_bool(e, "network", false);
        return -1;
    }
    const char *rootfs = core_image_rootfs(c, im->name);
    cella_err err;
    if (rootfs && rootfs_check_owner(rootfs, &err) < 0)
        return core_fail(e, S101, "image '%s' is unsafe to use: %s", im->name, err.msg);
    if (core_env_check("env", r->env, e) < 0)
        return -1;

    cg_limits lim;
    core_limits(c, cpus, mem, &lim);
    box *b = NULL;
    int ws_fd = -1;
    /* The pool holds host sandboxes: it serves the presets only. */
    if (!rootfs && pool_take(c, &b, &ws_fd)) {
        /* Warm sandboxes are made with the defaults; other limits are set now. */
        if ((cpus != cfg->default_cpus_milli || mem != cfg->default_memory_mb) &&
            cg_box_set_limits(b->cg, &lim, &err) < 0) {
            log_warn("warm sandbox %s: set limits: %s", b->id.str, err.msg);
            core_discard_box(c, b, ws_fd);
            b = NULL;
        }
    }
    if (!b && core_start_box(c, NULL, rootfs, &lim, true, &b, &ws_fd, &err) < 0) {
        pthread_mutex_lock(&c->mu);
        c->m.creates_failed++;
        pthread_mutex_unlock(&c->mu);
        return core_fail(e, S300, "sandbox start failed: %s", err.msg);
    }
    store_sandbox rec = {
        .tenant = (char *)tenant,
        .name = (char *)r->name,
        .image = (char *)im->name,
        .cpus_milli = cpus,
        .memory_mb = mem,
        .idle_timeout_secs = r->has_idle ? r->idle_timeout_secs : cfg->default_idle_timeout_secs,
        .env = (char **)r->env,
        .created_at_ms = core_wall_ms(),
        .cap_class = r->cap_class == CORE_CAP_SESSION ? CORE_CAP_SESSION : CORE_CAP_SANDBOX,
    };
    rec.last_used_at_ms = rec.created_at_ms;
    snprintf(rec.id, sizeof(rec.id), "%s", b->id.str);
    sandbox *s = sandbox_new(c, &rec);
    /* A one-shot run's sandbox is not recorded: after a crash there is
     * nobody to hand it back to, and its workspace is swept at the start. */
    s->persisted = !r->ephemeral;
    if (attach(s, b, ws_fd, &err) < 0 || (s->persisted && store_put(c->st, &rec, &err) < 0)) {
        teardown(c, s);
        sandbox_free(s);
        pthread_mutex_lock(&c->mu);
        c->m.creates_failed++;
        pthread_mutex_unlock(&c->mu);
        return core_fail(e, S300, "sandbox start failed: %s", err.msg);
    }
    pthread_mutex_lock(&c->mu);
    registry_add(c, s);
    /* The reserved slot becomes the registered sandbox in one step, so the
     * cap never counts it twice. */
    unreserve_locked(c, tenant, s->cap_class);
    *reserved = false;
    s->refs++;                    /* the caller's */
    c->m.creates_ok++;
    pthread_mutex_unlock(&c->mu);
    log_info("event=sandbox_created sandbox=%s tenant=%s image=%s cpus=%.3g memory_mb=%llu",
             s->id.str, tenant, im->name, cpus / 1000.0, (unsigned long long)mem);
    *out = s;
    return 0;
}

/* Any textual UUID (8-4-4-4-12 hex digits, either case, any version) is
 * well-formed, as iii's parser has it: one cella did not make is "not
 * found" (S002), not a bad request. canon gets it in lower case, the form
 * cella's own ids take, so a copy in upper case still finds its sandbox. */
static bool id_canonical(const char *id, char canon[CELLA_ID_LEN + 1])
{
    if (!id || strlen(id) != CELLA_ID_LEN)
        return false;
    for (int i = 0; i < CELLA_ID_LEN; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? id[i] != '-' : !isxdigit((unsigned char)id[i]))
            return false;
        canon[i] = (char)tolower((unsigned char)id[i]);
    }
    canon[CELLA_ID_LEN] = '\0';
    return true;
}

static int bad_id(core_error *e, const char *id)
{
    return core_fail(e, S001, "invalid request: sandbox_id '%.64s' is not a sandbox id (a UUID)",
                     id ? id : "");
}

/* The sandbox id of tenant (NULL: any tenant's), or NULL. Called with mu
 * held. Another tenant's sandbox is "not found": ids never leak across
 * tenants. */
static sandbox *tenant_find(core *c, const char *tenant, const char *id)
{
    sandbox *s = registry_find(c, id);
    return s && tenant && strcmp(s->tenant, tenant) != 0 ? NULL : s;
}

int core_get(core *c, const char *tenant, const char *id, sandbox **out, core_error *e)
{
    char canon[CELLA_ID_LEN + 1];
    if (!id_canonical(id, canon))
        return bad_id(e, id);
    id = canon;
    pthread_mutex_lock(&c->mu);
    sandbox *s = tenant_find(c, tenant, id);
    if (s)
        s->refs++;
    const tombstone *t = NULL;
    for (size_t i = 0; !s && i < CORE_TOMBSTONES; i++)
        if (!strcmp(c->tomb[i].id, id) && (!tenant || !strcmp(c->tomb[i].tenant, tenant)))
            t = &c->tomb[i];
    char why[96] = "";
    if (t)
        snprintf(why, sizeof(why), "%s", t->why);
    pthread_mutex_unlock(&c->mu);
    if (s) {
        *out = s;
        return 0;
    }
    if (t)
        return core_fail(e, S004, "sandbox already stopped: %s (%s)", id, why);
    return core_fail(e, S002, "sandbox not found: %s", id);
}

static void info_locked(sandbox *s, sandbox_info *o, int64_t now_ns, int64_t now_wall)
{
    memset(o, 0, sizeof(*o));
    snprintf(o->id, sizeof(o->id), "%s", s->id.str);
    snprintf(o->tenant, sizeof(o->tenant), "%s", s->tenant);
    o->has_name = s->name != NULL;
    snprintf(o->name, sizeof(o->name), "%s", s->name ? s->name : "");
    snprintf(o->image, sizeof(o->image), "%s", s->image);
    o->cpus_milli = s->cpus_milli;
    o->memory_mb = s->memory_mb;
    o->idle_timeout_secs = s->idle_timeout_secs;
    o->created_at_ms = s->created_at_ms;
    o->last_used_at_ms = now_wall - (now_ns - s->last_used_ns) / 1000000;
    if (s->restored_used_ms && s->last_used_ns == s->start_used_ns)
        o->last_used_at_ms = s->restored_used_ms;
    o->age_secs = now_wall > s->created_at_ms ? (uint64_t)(now_wall - s->created_at_ms) / 1000 : 0;
    o->execs_in_flight = s->execs;
    unsigned cap = s->c->cfg->max_execs_per_sandbox;
    o->exec_slots_free = s->execs < cap ? cap - s->execs : 0;
    o->dead = s->dead || s->stopped;
    snprintf(o->dead_reason, sizeof(o->dead_reason), "%s",
             s->stopped ? "stopped" : s->dead_reason);
}

void sandbox_get_info(sandbox *s, sandbox_info *out)
{
    int64_t now = clock_now_ns(), wall = core_wall_ms();
    pthread_mutex_lock(&s->c->mu);
    info_locked(s, out, now, wall);
    pthread_mutex_unlock(&s->c->mu);
}

int core_list(core *c, const char *tenant, sandbox_info **out, size_t *n_out)
{
    int64_t now = clock_now_ns(), wall = core_wall_ms();
    pthread_mutex_lock(&c->mu);
    sandbox_info *v = cella_calloc(c->n ? c->n : 1, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!tenant || !strcmp(c->v[i]->tenant, tenant))
            info_locked(c->v[i], &v[n++], now, wall);
    pthread_mutex_unlock(&c->mu);
    *out = v;
    *n_out = n;
    return 0;
}

static void *teardown_thread(void *arg)
{
    sandbox *s = arg;
    core *c = s->c;
    core_cap_class cls = s->cap_class;
    teardown(c, s);
    sandbox_unref(s);
    pthread_mutex_lock(&c->mu);
    c->teardowns--;
    c->teardowns_by[cls]--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Takes a sandbox out of the registry (holding the registry's reference)
 * and tears it down, now or in the background. */
static void stop_removed(core *c, sandbox *s, bool wait, const char *why)
{
    /* Logged first: after the hand-off below, s may be gone. */
    log_info("event=sandbox_stopped sandbox=%s reason=%s", s->id.str, why);
    /* Counted until its resources are gone, waited for or not: the cap
     * holds them. */
    pthread_mutex_lock(&c->mu);
    c->teardowns++;
    c->teardowns_by[s->cap_class]++;
    pthread_mutex_unlock(&c->mu);
    if (!wait) {
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 256 << 10);
        int rc = pthread_create(&th, &at, teardown_thread, s);
        pthread_attr_destroy(&at);
        if (rc == 0)
            return;
    }
    teardown_thread(s);
}

int core_stop(core *c, const char *tenant, const char *id, bool wait, core_error *e)
{
    char canon[CELLA_ID_LEN + 1];
    if (!id_canonical(id, canon))
        return bad_id(e, id);
    id = canon;
    pthread_mutex_lock(&c->mu);
    sandbox *s = tenant_find(c, tenant, id);
    if (s) {
        registry_remove(c, s);
        s->stopped = true;
        c->m.stops++;
    }
    pthread_mutex_unlock(&c->mu);
    if (!s)
        return core_fail(e, S002, "sandbox not found: %s", id);
    stop_removed(c, s, wait, "stop");
    return 0;
}

/* ---- the reaper ----------------------------------------------------------- */

static void tombstone_add(core *c, const sandbox *s, const char *why)
{
    tombstone *t = &c->tomb[c->tomb_next++ % CORE_TOMBSTONES];
    snprintf(t->id, sizeof(t->id), "%s", s->id.str);
    snprintf(t->tenant, sizeof(t->tenant), "%s", s->tenant);
    snprintf(t->why, sizeof(t->why), "%s", why);
}

/* A sandbox is idle when no exec or file call touched it for its
 * idle_timeout_secs. One with an exec in flight is spared until idle
 * timeout + the longest exec timeout + 60 s, as iii does. */
static void reap_once(core *c)
{
    int64_t now = clock_now_ns();
    sandbox *victims[64];
    size_t nv = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n && nv < 64;) {
        sandbox *s = c->v[i];
        int64_t limit_ms = (int64_t)s->idle_timeout_secs * 1000;
        if (s->execs || s->fs_calls)
            limit_ms += (int64_t)c->cfg->max_exec_timeout_ms + 60000;
        if ((now - s->last_used_ns) / 1000000 > limit_ms) {
            registry_remove(c, s);
            s->stopped = true;
            char why[96];
            snprintf(why, sizeof(why), "reaped after %llu s idle",
                     (unsigned long long)s->idle_timeout_secs);
            tombstone_add(c, s, why);
            c->m.reaped++;
            victims[nv++] = s;
            continue;
        }
        i++;
    }
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < nv; i++)
        stop_removed(c, victims[i], true, "idle");
}

/* Writes to the records when each sandbox used since the last pass was
 * last used, so that a listing after a restart still says. The database
 * is written outside the lock; a sandbox stopped meanwhile has no record
 * left to update, which is no error. */
static void persist_use(core *c)
{
    typedef struct used {
        char id[40];
        int64_t ms;
    } used;
    int64_t now = clock_now_ns(), wall = core_wall_ms();
    pthread_mutex_lock(&c->mu);
    used *v = cella_calloc(c->n + 1, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        sandbox *s = c->v[i];
        if (!s->persisted || s->last_used_ns == s->saved_used_ns)
            continue;
        snprintf(v[n].id, sizeof(v[n].id), "%s", s->id.str);
        v[n++].ms = wall - (now - s->last_used_ns) / 1000000;
        s->saved_used_ns = s->last_used_ns;
    }
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++) {
        cella_err err;
        if (store_touch(c->st, v[i].id, v[i].ms, &err) < 0)
            log_warn("sandbox %s: record its last use: %s", v[i].id, err.msg);
    }
    cella_free(v);
}

static void *reaper_main(void *arg)
{
    core *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->closing) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t ns = ts.tv_nsec + (c->reap_interval_ms % 1000) * 1000000;
        ts.tv_sec += c->reap_interval_ms / 1000 + ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&c->reaper_cv, &c->mu, &ts);
        if (c->closing)
            break;
        pthread_mutex_unlock(&c->mu);
        reap_once(c);
        persist_use(c);
        retry_deletes(c);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- open, recover, close ------------------------------------------------ */

/* Workspaces named like a sandbox id that no record claims are left from
 * warm sandboxes of an earlier run (or a create cut short): removed. */
static void sweep_workspaces(core *c)
{
    int dfd = openat(c->rt->workspaces_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        uint8_t bytes[16];
        if (!cella_id_parse(de->d_name, bytes) || registry_find(c, de->d_name))
            continue;
        if (rmtree_at(c->rt->workspaces_fd, de->d_name, NULL) == 0)
            log_info("event=workspace_swept workspace=%s", de->d_name);
    }
    closedir(d);
}

static void recover(core *c)
{
    store_sandbox *recs = NULL;
    size_t n = 0;
    cella_err err;
    if (store_list(c->st, &recs, &n, &err) < 0) {
        log_error("%s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        sandbox *s = sandbox_new(c, &recs[i]);
        s->persisted = true;
        cella_id id;
        snprintf(id.str, sizeof(id.str), "%.36s", recs[i].id);
        cg_limits lim;
        core_limits(c, s->cpus_milli, s->memory_mb, &lim);
        box *b;
        int ws_fd;
        const core_image *im = catalog_find(c, s->image);
        if (!im) {
            cella_err_set(&err, 0, "its image '%s' is no longer in the catalog", s->image);
            goto dead;
        }
        if (core_start_box(c, &id, core_image_rootfs(c, s->image), &lim, false, &b, &ws_fd, &err) < 0 ||
            attach(s, b, ws_fd, &err) < 0) {
        dead:
            /* Listed, but dead: the caller sees why and can stop it. */
            s->dead = true;
            snprintf(s->dead_reason, sizeof(s->dead_reason), "restart failed: %.120s", err.msg);
            log_error("sandbox %s: restart failed: %s", s->id.str, err.msg);
        } else {
            log_info("event=sandbox_restarted sandbox=%s tenant=%s", s->id.str, s->tenant);
        }
        registry_add(c, s);
        store_sandbox_free(&recs[i]);
    }
    cella_free(recs);
}

int core_open(const cella_config *cfg, core **out, cella_err *err)
{
    core *c = cella_calloc(1, sizeof(*c));
    c->cfg = cfg;
    c->lock_fd = -1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_cond_init(&c->pool_cv, &ca);
    pthread_cond_init(&c->reaper_cv, &ca);
    pthread_condattr_destroy(&ca);
    c->reap_interval_ms = REAP_INTERVAL_MS;
    const char *ri = getenv("CELLA_REAP_INTERVAL_MS");   /* tests only */
    if (ri && atoll(ri) > 0)
        c->reap_interval_ms = atoll(ri);

    box_runtime_opts ro = {.state_dir = cfg->state_dir};
    if (box_runtime_open(&ro, &c->rt, err) < 0)
        goto error;
    /* One daemon per state directory: two would restart the same sandboxes
     * and sweep each other's workspaces. */
    c->lock_fd = openat(c->rt->sd.fd, "serve.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (c->lock_fd < 0) {
        cella_err_set(err, errno, "open %s/serve.lock", c->rt->sd.path);
        goto error;
    }
    if (flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        cella_err_set(err, 0, "another cella serve is using the state directory %s", c->rt->sd.path);
        goto error;
    }
    if (store_open(c->rt->sd.path, &c->st, err) < 0)
        goto error;
    catalog_init(c);
    workspace_sweep_temp(c->rt);
    recover(c);
    sweep_workspaces(c);
    pool_start(c);
    code_pool_opts co = {
        .workers = cfg->code_workers,
        .queue_max = cfg->code_queue_max,
        .max_paused = cfg->code_max_paused_runs,
        .max_paused_per_tenant = cfg->code_max_paused_runs_per_tenant,
        .ttl_ms = cfg->code_run_ttl_secs * 1000,
        .resident_ms = cfg->code_resident_secs * 1000,
        .as_bytes = (cfg->code_max_memory_mb << 20) + CODE_WORKER_AS_HEADROOM,
        .out_max = cfg->output_limit_bytes,
        .node_key = c->rt->sd.node_key,
        /* tests only: a worker built with a fake interpreter */
        .exe = getenv("CELLA_CODE_WORKER_EXE"),
    };
    if (code_pool_open(&co, &c->code, err) < 0)
        goto error;
    if (pthread_create(&c->reaper, NULL, reaper_main, c) != 0) {
        cella_err_set(err, errno, "start the reaper");
        goto error;
    }
    c->reaper_started = true;
    *out = c;
    return 0;
error:
    core_close(c);
    return -1;
}

struct code_pool *core_code_pool(core *c)
{
    return c->code;
}

struct store *core_store(core *c)
{
    return c->st;
}

bool core_ready(core *c)
{
    pthread_mutex_lock(&c->mu);
    bool r = c->ready && !c->draining;
    pthread_mutex_unlock(&c->mu);
    return r;
}

void core_drain(core *c)
{
    pthread_mutex_lock(&c->mu);
    c->draining = true;
    pthread_mutex_unlock(&c->mu);
    if (c->code)
        code_pool_drain(c->code);
}

bool core_wait_idle(core *c, int timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&c->mu);
    while (c->execs_running > 0)
        if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) != 0)
            break;
    bool idle = c->execs_running == 0;
    pthread_mutex_unlock(&c->mu);
    return idle;
}

void core_close(core *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->closing = c->draining = true;
    pthread_cond_broadcast(&c->reaper_cv);
    pthread_mutex_unlock(&c->mu);
    if (c->reaper_started)
        pthread_join(c->reaper, NULL);
    pool_stop(c);
    code_pool_close(c->code);
    c->code = NULL;
    /* Background stops finish first: they own their sandboxes. */
    pthread_mutex_lock(&c->mu);
    while (c->teardowns > 0)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    /* The rest keep their records (their last use written now) and
     * workspaces for the next start; only their processes end. */
    if (c->st) {
        persist_use(c);
        retry_deletes(c);
    }
    cella_free(c->undeleted);
    for (size_t i = 0; i < c->n; i++) {
        sandbox *s = c->v[i];
        mux_detach(s->mux);
        if (s->b)
            box_destroy(s->b);
        if (s->ws_fd >= 0)
            close(s->ws_fd);
        s->b = NULL;
        s->ws_fd = -1;
        sandbox_unref(s);
    }
    cella_free(c->v);
    cella_free(c->creating_v);
    store_close(c->st);
    if (c->lock_fd >= 0)
        close(c->lock_fd);
    box_runtime_close(c->rt);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    pthread_cond_destroy(&c->pool_cv);
    pthread_cond_destroy(&c->reaper_cv);
    cella_free(c);
}

const double core_exec_bucket_secs[CORE_EXEC_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                         0.1,   0.25,   0.5,   1,    5,     30};

void core_get_metrics(core *c, core_metrics *m)
{
    pthread_mutex_lock(&c->mu);
    *m = c->m;
    m->sandboxes_live = live_count(c);
    m->sandboxes_dead = (unsigned)c->n - m->sandboxes_live;
    m->pool_depth = (unsigned)c->pool_n;
    m->pool_target = c->cfg->pool_size;
    pthread_mutex_unlock(&c->mu);
}
