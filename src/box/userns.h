/* User-namespace mappings.
 *
 * Root mode (cella runs as root): each live sandbox holds a "slot", a range of
 * 65536 host ids of its own, [base + slot*65536, base + (slot+1)*65536), and
 * maps ids 0..65535 inside onto it. Two sandboxes never share a host uid, so
 * nothing one does is allowed to the other by the kernel's uid checks
 * (signals, ptrace, files, rlimits). Ranges start at multiples of 65536, so
 * two ranges are identical or disjoint, and each is claimed with flock() on a
 * file named after its first uid in a host-wide directory: concurrent cella
 * processes (daemon, CLI, even with different bases) never share a range, and
 * a crashed holder frees its own.
 *
 * User mode (cella runs unprivileged): the kernel allows one mapping line, the
 * caller's own uid/gid shown as the sandbox user (1000). */
#ifndef CELLA_BOX_USERNS_H
#define CELLA_BOX_USERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

#define USERNS_RANGE 65536u
#define USERNS_DEFAULT_BASE 0x70000000u     /* just above systemd's container range */
#define USERNS_DEFAULT_SLOTS 4096u          /* base + slots*65536 = 0x80000000 */
#define SANDBOX_UID 1000u
#define SANDBOX_GID 1000u

typedef struct userns_slot {
    int lock_fd;          /* -1 when not held */
    uint32_t slot;
    uint32_t host_base;   /* host id that id 0 inside maps to */
} userns_slot;

/* Checks that base is a multiple of 65536 and [base, base + slots*65536)
 * stays below 2^32-1 and above the ids real users get (>= 65536). */
int userns_check_range(uint32_t base, uint32_t slots, cella_err *err);
/* Host id for a slot (pure). */
uint32_t userns_slot_base(uint32_t base, uint32_t slot);
/* Claims a free slot; slots_dirfd holds the lock files. start is where the
 * search begins (random in practice, so concurrent claims rarely collide). */
int userns_slot_acquire(int slots_dirfd, uint32_t base, uint32_t slots, uint32_t start,
                        userns_slot *out, cella_err *err);
void userns_slot_release(userns_slot *s);
/* Claims the range starting at host_base if it is free (1), reports it busy
 * (0), or fails (-1). */
int userns_slot_try(int slots_dirfd, uint32_t host_base, userns_slot *out, cella_err *err);

/* The uid_map / gid_map text (pure). Root mode maps the whole range;
 * user mode maps inside_id onto host_id. */
int userns_map_text(bool root_mode, uint32_t host_base, uint32_t inside_id, uint32_t host_id,
                    char *buf, size_t n);
/* Writes a child's maps: /proc/<pid>/{setgroups,uid_map,gid_map}. */
int userns_write_maps(pid_t pid, const char *uid_map, const char *gid_map, bool deny_setgroups,
                      cella_err *err);

#endif
