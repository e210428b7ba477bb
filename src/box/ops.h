/* A growable list of setup operations (agent/proto.h's proto_op) that the
 * parent builds and the agent runs, in order, to make a sandbox's root. */
#ifndef CELLA_BOX_OPS_H
#define CELLA_BOX_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/proto.h"

typedef struct opv {
    proto_op *v;
    uint32_t n, cap;
} opv;

void opv_dir(opv *o, const char *dest, uint32_t mode);
void opv_file(opv *o, const char *dest, const char *content, uint32_t mode);
void opv_symlink(opv *o, const char *target, const char *dest);
void opv_bind(opv *o, const char *src, const char *dest, uint32_t flags);
void opv_fd(opv *o, uint32_t kind, int32_t fd_index, const char *dest, uint32_t flags);
void opv_tmpfs(opv *o, const char *dest, uint64_t size, uint32_t mode, uint32_t flags);
void opv_simple(opv *o, uint32_t kind, const char *dest, uint32_t flags);
/* Appends deep copies of another list's ops. */
void opv_extend(opv *o, const proto_op *ops, uint32_t n);
void opv_free(opv *o);

#endif
