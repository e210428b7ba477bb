/* The workspace quota across concurrent file operations.
 *
 * Every file operation runs in a child of the agent, many at once (16 per
 * sandbox from the daemon). Measuring the workspace when a call starts is
 * not enough: concurrent calls all see the same free space, and the files
 * they are writing (nameless O_TMPFILEs until the end) are invisible to
 * each other's walks, so three 40 MiB uploads would all fit a 64 MiB
 * quota. So the calls share one page, mapped MAP_SHARED | MAP_ANONYMOUS by
 * the agent before it forks any of them (fs_quota_init), holding:
 *
 *  - a slot per call: the bytes it has reserved and not yet made visible.
 *    A call reserves before it writes (a declared length at once, a stream
 *    in steps as it arrives), and a reservation is granted only while
 *        usage - credit + all reservations + the new bytes <= quota
 *    (credit: the file it replaces), so bytes in flight never add up past
 *    the quota and an over-quota upload is refused before its body is read;
 *  - a process-shared robust mutex and a commit generation. A file is made
 *    visible (linked and renamed into place) only under the mutex, after a
 *    last check against the usage at that moment: usage - what the rename
 *    frees + the file's real size in blocks + the other calls'
 *    reservations. Commits are serialised, so the files committed never
 *    add up past the quota, whatever order the calls finish in.
 *
 * The usage is a walk of /workspace (allocated blocks, no symlink
 * followed). A call walks once, outside the lock, having read the
 * generation first; under the lock it walks again only when the
 * generation moved (another call committed since: its bytes left the
 * reservations and entered the tree). Its own commits are added as they
 * happen and advance its generation, so one call committing many files (an
 * archive, a tree moved in) does not walk again unless another call wrote.
 *
 * The agent (PID 1) clears a child's slot when it reaps it, so a call
 * killed half-way (its client went away, it was stopped) leaves no
 * reservation behind; a call that dies holding the mutex leaves it to the
 * next (robust: EOWNERDEAD, and the state it guards is only the order of
 * commits). Waiting for the lock is bounded, so a stopped holder (sandbox
 * code may SIGSTOP its own user's processes) fails calls instead of
 * hanging them.
 *
 * The page is not a security boundary: the quota bounds what the file API
 * writes, while commands run by exec write what they like (they never see
 * the page: exec replaces the address space), and the calls' processes are
 * not dumpable, so sandbox code cannot write the page through /proc. */
#include "agent/fs_quota.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long a call waits for another's commit (a walk of a large workspace
 * takes seconds at worst). */
#define FSQ_LOCK_WAIT_S 60

typedef struct fsq_slot {
    _Atomic int32_t pid;          /* 0: free */
    _Atomic uint64_t bytes;
} fsq_slot;

typedef struct fsq_page {
    pthread_mutex_t mu;
    _Atomic uint64_t gen;         /* commits so far */
    fsq_slot slot[FSQ_SLOTS];
} fsq_page;

/* The agent's page, inherited by every child it forks; NULL outside an
 * agent, where a page of this process's own stands in (nothing to share). */
static fsq_page *page;

static int page_init(fsq_page *p, bool shared)
{
    memset(p, 0, sizeof(*p));
    pthread_mutexattr_t at;
    int e = pthread_mutexattr_init(&at);
    if (!e && shared)
        e = pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
    if (!e)
        e = pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
    if (!e)
        e = pthread_mutex_init(&p->mu, &at);
    pthread_mutexattr_destroy(&at);
    return e;
}

int fs_quota_init(void)
{
    fsq_page *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    int e = page_init(p, true);
    if (e) {
        munmap(p, sizeof(*p));
        errno = e;
        return -1;
    }
    page = p;
    return 0;
}

void fs_quota_reaped(pid_t pid)
{
    if (!page || pid <= 0)
        return;
    for (int i = 0; i < FSQ_SLOTS; i++)
        if (atomic_load(&page->slot[i].pid) == pid) {
            /* Bytes first: a reader never sees a free slot holding bytes. */
            atomic_store(&page->slot[i].bytes, 0);
            atomic_store(&page->slot[i].pid, 0);
        }
}

static fsq_page *the_page(void)
{
    static fsq_page own;
    static bool own_ready;
    if (!page && !own_ready) {
        page_init(&own, false);
        own_ready = true;
    }
    return page ? page : &own;
}

/* ---- measuring ------------------------------------------------------------ */

uint64_t fsq_fd_bytes(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

uint64_t fsq_freed_at(int dir, const char *name)
{
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
        st.st_nlink != 1)
        return 0;
    return (uint64_t)st.st_blocks * 512;
}

/* Adds the allocated bytes under the directory fd (consumed). */
static void usage_walk(int fd, int depth, uint64_t *sum)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        *sum += (uint64_t)st.st_blocks * 512;
        if (S_ISDIR(st.st_mode) && depth < FS_MAX_DEPTH) {
            int c = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (c >= 0)
                usage_walk(c, depth + 1, sum);
        }
    }
    closedir(d);
}

/* base := the workspace's usage now, less what this call hides in it. */
static void measure(fsq *q, uint64_t gen)
{
    uint64_t used = 0;
    int fd = open("/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
        usage_walk(fd, 0, &used);
    uint64_t hid = q->hidden + fsq_fd_bytes(q->hidden_fd);
    q->base = used > hid ? used - hid : 0;
    q->gen0 = gen;
    q->walked = true;
}

/* The first measurement, outside the lock (walks run in parallel). The
 * generation is read before the walk: a commit that lands during it moves
 * the generation, and the next look under the lock walks again. */
static void first_measure(fsq *q)
{
    if (!q->walked)
        measure(q, atomic_load(&the_page()->gen));
}

/* Under the lock: measured again if another call committed since. */
static void refresh(fsq *q)
{
    uint64_t g = atomic_load(&the_page()->gen);
    if (!q->walked || g != q->gen0)
        measure(q, g);
}

static uint64_t others_reserved(const fsq *q)
{
    uint64_t sum = 0;
    fsq_page *p = the_page();
    for (int i = 0; i < FSQ_SLOTS; i++)
        if (i != q->slot && atomic_load(&p->slot[i].pid))
            sum += atomic_load(&p->slot[i].bytes);
    return sum;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---- the lock ---------------------------------------------------------------- */

static int lock(const char *what)
{
    fsq_page *p = the_page();
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += FSQ_LOCK_WAIT_S;
    int e = pthread_mutex_clocklock(&p->mu, CLOCK_MONOTONIC, &t);
    if (e == EOWNERDEAD) {
        /* Its holder died mid-commit: what the lock orders is only the
         * commits, and its slot is cleared when the agent reaps it. */
        pthread_mutex_consistent(&p->mu);
        e = 0;
    }
    if (e)
        return fs_fail(BUILTIN_IO, "%s: the workspace quota's lock stayed busy for %d s (%s)",
                       what, FSQ_LOCK_WAIT_S, strerror(e));
    return BUILTIN_OK;
}

static void unlock(void)
{
    pthread_mutex_unlock(&the_page()->mu);
}

static int over_quota(const fsq *q, const char *what, uint64_t need, uint64_t used,
                      uint64_t others)
{
    uint64_t taken = add_sat(used, others);
    uint64_t left = taken >= q->quota ? 0 : q->quota - taken;
    char more[96] = "";
    if (others)
        snprintf(more, sizeof(more), ", %llu more being written by other calls",
                 (unsigned long long)others);
    return fs_fail(BUILTIN_QUOTA, "resource limit exceeded: %s needs %llu bytes and the workspace "
                   "quota of %llu bytes leaves %llu (%llu in use%s)", what,
                   (unsigned long long)need, (unsigned long long)q->quota,
                   (unsigned long long)left, (unsigned long long)used, more);
}

/* ---- transactions ----------------------------------------------------------------- */

int fsq_begin(fsq *q, const fs_args *a)
{
    memset(q, 0, sizeof(*q));
    q->slot = -1;
    q->hidden_fd = -1;
    return fs_arg_u64(a, "quota", 0, &q->quota) < 0 ? BUILTIN_USAGE : BUILTIN_OK;
}

void fsq_end(fsq *q)
{
    if (q->slot < 0)
        return;
    fsq_page *p = the_page();
    atomic_store(&p->slot[q->slot].bytes, 0);
    atomic_store(&p->slot[q->slot].pid, 0);
    q->slot = -1;
    q->reserved = 0;
}

bool fsq_counts(fsq *q, int fd)
{
    if (!q || !q->quota)
        return false;
    if (q->ws_state == 0) {
        struct statx ws;
        q->ws_state = -1;
        if (statx(AT_FDCWD, "/workspace", 0, STATX_MNT_ID, &ws) == 0 && S_ISDIR(ws.stx_mode)) {
            q->ws_state = 1;
            q->ws_mnt_ok = ws.stx_mask & STATX_MNT_ID;
            q->ws_mnt = ws.stx_mnt_id;
            q->ws_major = ws.stx_dev_major;
            q->ws_minor = ws.stx_dev_minor;
        }
    }
    struct statx x;
    if (q->ws_state < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &x) < 0)
        return false;
    /* The mount, where the kernel says it (5.8 and later): a bind mount of
     * the same disk elsewhere is not the workspace. */
    if (q->ws_mnt_ok && (x.stx_mask & STATX_MNT_ID))
        return x.stx_mnt_id == q->ws_mnt;
    return x.stx_dev_major == q->ws_major && x.stx_dev_minor == q->ws_minor;
}

/* This call's slot, claimed on first use. */
static int claim(fsq *q)
{
    if (q->slot >= 0)
        return BUILTIN_OK;
    fsq_page *p = the_page();
    int32_t me = (int32_t)getpid();
    for (int i = 0; i < FSQ_SLOTS; i++) {
        int32_t free_pid = 0;
        if (atomic_compare_exchange_strong(&p->slot[i].pid, &free_pid, me)) {
            atomic_store(&p->slot[i].bytes, 0);
            q->slot = i;
            return BUILTIN_OK;
        }
    }
    return fs_fail(BUILTIN_IO, "more than %d file operations write at once", FSQ_SLOTS);
}

int fsq_reserve(fsq *q, uint64_t total, uint64_t ahead, const char *what)
{
    if (!q || !q->quota || total <= q->reserved)
        return BUILTIN_OK;
    int rc = claim(q);
    if (rc)
        return rc;
    first_measure(q);
    if ((rc = lock(what)))
        return rc;
    refresh(q);
    uint64_t used = q->base > q->credit ? q->base - q->credit : 0;
    uint64_t others = others_reserved(q);
    uint64_t taken = add_sat(used, others);
    uint64_t room = taken >= q->quota ? 0 : q->quota - taken;
    if (total > room) {
        unlock();
        return over_quota(q, what, total, used, others);
    }
    uint64_t want = add_sat(total, ahead) < room ? add_sat(total, ahead) : room;
    atomic_store(&the_page()->slot[q->slot].bytes, want);
    q->reserved = want;
    unlock();
    return BUILTIN_OK;
}

int fsq_commit(fsq *q, uint64_t adds, fsq_freed_fn freed, fsq_apply_fn apply, void *arg,
               const char *what)
{
    if (!q || !q->quota)
        return apply(arg);
    first_measure(q);
    int rc = lock(what);
    if (rc)
        return rc;
    refresh(q);
    uint64_t fr = freed ? freed(arg) : 0;
    uint64_t used = q->base > fr ? q->base - fr : 0;
    uint64_t others = others_reserved(q);
    /* A commit that frees at least what it adds grows nothing: allowed even
     * when commands (which the quota does not bound) filled the workspace. */
    if (adds > fr && add_sat(add_sat(used, others), adds) > q->quota) {
        unlock();
        return over_quota(q, what, adds, used, others);
    }
    rc = apply(arg);
    fsq_page *p = the_page();
    if (rc == BUILTIN_OK) {
        /* This call's commit is the only change since base was measured
         * (the lock is held), so base follows without a walk. */
        q->base = add_sat(used, adds);
        q->gen0 = atomic_fetch_add(&p->gen, 1) + 1;
        q->hidden = 0;
        q->hidden_fd = -1;
        q->credit = 0;
        q->reserved = 0;
        if (q->slot >= 0)
            atomic_store(&p->slot[q->slot].bytes, 0);
    } else {
        /* Half applied, perhaps (several renames): everyone measures again. */
        atomic_fetch_add(&p->gen, 1);
    }
    unlock();
    return rc;
}
