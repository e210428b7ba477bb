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
} image_params;

int host_image_load(host_image *img, cella_err *err);
void host_image_free(host_image *img);
/* The whole op list for one sandbox. */
void host_image_ops(const host_image *img, const image_params *p, opv *out);

#endif
