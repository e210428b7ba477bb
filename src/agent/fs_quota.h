/* The workspace quota, held across concurrent file operations (fs_quota.c
 * says how and why). Each writing operation runs one transaction:
 *
 *   fsq q;
 *   fsq_begin(&q, args);                 quota=N from the caller, 0: none
 *   ... fsq_counts(&q, fd)               is this file on /workspace's mount?
 *   ... fsq_reserve(&q, total, ahead)    before the bytes are written
 *   ... fsq_commit(&q, adds, ...)        the file made visible, checked last
 *   fsq_end(&q);                         what is still reserved is released
 *
 * Every function answers a BUILTIN_* status with its message printed, as
 * the operations do; with no quota they are no-ops (fsq_commit just runs
 * its apply). */
#ifndef CELLA_AGENT_FS_QUOTA_H
#define CELLA_AGENT_FS_QUOTA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/fs_int.h"

/* One per child the agent may have (AGENT_MAX_EXECS): every file
 * operation is one of them, so a slot is always free. */
#define FSQ_SLOTS 64
/* An undeclared length reserves this far ahead of what has arrived, so a
 * stream takes the shared lock once per few MiB, not once per read. */
#define FSQ_AHEAD (4u << 20)

/* n bytes as the disk counts them: whole 4 KiB blocks, and one more for
 * the file's own metadata (an extent block), so what a reservation grants
 * covers what the commit finds (saturating). */
static inline uint64_t fsq_blocks(uint64_t n)
{
    return n > UINT64_MAX - 8192 ? UINT64_MAX : ((n + 4095) & ~(uint64_t)4095) + 4096;
}

typedef struct fsq {
    uint64_t quota;               /* bytes; 0: no quota for this call */
    bool walked;                  /* base holds a measurement */
    uint64_t base;                /* /workspace's usage as of generation gen0, this call's
                                   * commits included, its hidden bytes not */
    uint64_t gen0;
    int slot;                     /* this call's slot in the shared page, -1: none yet */
    uint64_t reserved;            /* bytes reserved in that slot */
    uint64_t credit;              /* bytes the file(s) about to be replaced hold: a
                                   * reservation counts them as freed */
    uint64_t hidden;              /* blocks of this call's finished named temporaries: walks
                                   * see them, yet they are still reserved */
    int hidden_fd;                /* a named temporary being written (its blocks are hidden
                                   * too), -1: none */
    int ws_state;                 /* /workspace's identity: 0 unknown, 1 known, -1 none */
    uint64_t ws_mnt;
    bool ws_mnt_ok;               /* ws_mnt is a mount id (else compare devices) */
    uint32_t ws_major, ws_minor;
} fsq;

/* The agent, before it forks any child: the page every transaction shares.
 * 0, or -1 with errno. */
int fs_quota_init(void);
/* The agent, for each child it reaps: whatever that child still had
 * reserved is released (a call killed half-way leaves nothing behind). */
void fs_quota_reaped(pid_t pid);

/* Reads quota=N (bytes, 0 or absent: none). */
int fsq_begin(fsq *q, const fs_args *a);
/* Releases this call's reservation and slot. */
void fsq_end(fsq *q);
/* Whether the file open at fd (q may be NULL) grows the workspace: it is
 * on /workspace's mount. A file elsewhere (/tmp) is not the quota's. */
bool fsq_counts(fsq *q, int fd);
/* Makes this call's reservation at least total bytes (plus up to ahead
 * more where the quota leaves room), or fails with S400 if the workspace's
 * usage, less q->credit, plus every call's reservations, plus total would
 * pass the quota. what names the file in the message. */
int fsq_reserve(fsq *q, uint64_t total, uint64_t ahead, const char *what);
/* The last check, serialised with every other call's: under the shared
 * lock, the usage now (walked again if another call committed since),
 * less what freed(arg) says the apply frees, plus adds (the blocks it
 * makes visible), plus the other calls' reservations, must stay within the
 * quota; then apply(arg) runs, still under the lock, and on success this
 * call's reservation, credit and hidden bytes are spent. A status. */
typedef int (*fsq_apply_fn)(void *arg);
typedef uint64_t (*fsq_freed_fn)(void *arg);
int fsq_commit(fsq *q, uint64_t adds, fsq_freed_fn freed, fsq_apply_fn apply, void *arg,
               const char *what);
/* The bytes name in dir frees when it is replaced: a regular file with no
 * other link (a hard-linked one stays where its other name is). */
uint64_t fsq_freed_at(int dir, const char *name);
/* The bytes the file open at fd holds (allocated blocks); 0 for fd < 0. */
uint64_t fsq_fd_bytes(int fd);

#endif
