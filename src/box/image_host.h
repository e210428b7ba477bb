/* The built-in image `host`: the host's /usr (and its merged-/usr links)
 * read-only, the few files of /etc that programs need, generated identity
 * files, and fresh /proc, /dev, /tmp. Nothing else of the host is visible. */
#ifndef CELLA_BOX_IMAGE_HOST_H
#define CELLA_BOX_IMAGE_HOST_H

#include <stdint.h>

#include "box/ops.h"
#include "util/err.h"

typedef struct host_image {
    opv fixed;     /* the parts that depend only on the host: read once */
} host_image;

typedef struct image_params {
    const char *hostname;
    uint64_t tmp_bytes;      /* /tmp */
    uint64_t shm_bytes;      /* /dev/shm */
    uint32_t workspace_kind; /* OP_ATTACH_FD or OP_BIND_FD */
    int32_t workspace_fd;    /* index among the descriptors sent with SETUP */
    int32_t rootfs_fd;       /* custom images: index of the root directory's descriptor */
} image_params;

int host_image_load(host_image *img, cella_err *err);
void host_image_free(host_image *img);
/* The whole op list for one sandbox. */
void host_image_ops(const host_image *img, const image_params *p, opv *out);

/* An image from a root directory (a custom image): each top-level entry of
 * rootfs read-only (symlinks as symlinks), its /etc read-only but for the
 * generated identity files, and the same /proc, /dev, /tmp and /workspace as
 * the host image. Binds name their sources relative to the descriptor
 * p->rootfs_fd (opened by the caller on rootfs). Fails when rootfs is not an
 * absolute path to a directory. */
int rootfs_image_ops(const char *rootfs, const image_params *p, opv *out, cella_err *err);
/* An image's root must be root's alone: the directory and every parent owned
 * by root (or by the user running cella) and not writable by group or
 * others (a parent may be if it is sticky, as /var/tmp is). Whoever could
 * write it could change what every sandbox of the image runs, or plant a
 * socket to the host in it. */
int rootfs_check_owner(const char *rootfs, cella_err *err);

#endif
