/* /workspace: a directory on the host's disk, bound read-write into the
 * sandbox. Root mode attaches it through an idmapped mount, so the
 * directory's owner on disk is the sandbox user inside, whatever uid range
 * the sandbox got, and files keep their owner across sandboxes and restarts. */
#ifndef CELLA_BOX_WORKSPACE_H
#define CELLA_BOX_WORKSPACE_H

#include <stdint.h>
#include <sys/types.h>

#include "box/runtime.h"
#include "util/err.h"

/* Owners below this (root, system accounts) cannot be a workspace's owner. */
#define WORKSPACE_MIN_OWNER 1000u

/* A fresh, empty workspace <state>/workspaces/<name>, owned by the sandbox
 * user. Returns a directory fd. */
int workspace_create(box_runtime *rt, const char *name, int *dirfd, cella_err *err);
int workspace_remove(box_runtime *rt, const char *name, cella_err *err);
/* A throwaway workspace for one run (`cella box`): like workspace_create,
 * but locked (flock on the returned fd) for as long as the fd is open. name
 * receives its name (at least 32 bytes). */
int workspace_create_temp(box_runtime *rt, char *name, int *dirfd, cella_err *err);
/* Removes throwaway workspaces whose owner died without cleaning up (their
 * lock is free). Returns how many were removed. */
int workspace_sweep_temp(box_runtime *rt);
/* Turns a workspace directory into what the agent attaches at /workspace:
 * in root mode a detached idmapped mount (OP_ATTACH_FD) mapping the
 * directory's owner to the sandbox user of the sandbox whose ids start at
 * slot_base (child is that sandbox's first process); in user mode a plain
 * descriptor to bind (OP_BIND_FD). */
int workspace_mount_fd(box_runtime *rt, int dirfd, uint32_t slot_base, pid_t child, int *fd,
                       uint32_t *kind, cella_err *err);

#endif
