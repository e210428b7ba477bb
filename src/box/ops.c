#include "box/ops.h"

#include <string.h>

#include "util/alloc.h"

static proto_op *opv_push(opv *o, uint32_t kind, const char *dest)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 32;
        o->v = cella_realloc(o->v, o->cap * sizeof(proto_op));
    }
    proto_op *op = &o->v[o->n++];
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->fd_index = -1;
    op->dest = cella_strdup(dest);
    return op;
}

void opv_dir(opv *o, const char *dest, uint32_t mode)
{
    opv_push(o, OP_DIR, dest)->mode = mode;
}

void opv_file(opv *o, const char *dest, const char *content, uint32_t mode)
{
    proto_op *op = opv_push(o, OP_FILE, dest);
    op->mode = mode;
    op->data_len = strlen(content);
    op->data = cella_malloc(op->data_len + 1);
    memcpy(op->data, content, op->data_len + 1);
}

void opv_symlink(opv *o, const char *target, const char *dest)
{
    opv_push(o, OP_SYMLINK, dest)->src = cella_strdup(target);
}

void opv_bind(opv *o, const char *src, const char *dest, uint32_t flags)
{
    proto_op *op = opv_push(o, OP_BIND, dest);
    op->src = cella_strdup(src);
    op->flags = flags;
}

void opv_fd(opv *o, uint32_t kind, int32_t fd_index, const char *dest, uint32_t flags)
{
    proto_op *op = opv_push(o, kind, dest);
    op->fd_index = fd_index;
    op->flags = flags;
}

void opv_tmpfs(opv *o, const char *dest, uint64_t size, uint32_t mode, uint32_t flags)
{
    proto_op *op = opv_push(o, OP_TMPFS, dest);
    op->size = size;
    op->mode = mode;
    op->flags = flags;
}

void opv_simple(opv *o, uint32_t kind, const char *dest, uint32_t flags)
{
    opv_push(o, kind, dest)->flags = flags;
}

void opv_extend(opv *o, const proto_op *ops, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        proto_op *op = opv_push(o, ops[i].kind, ops[i].dest);
        op->flags = ops[i].flags;
        op->mode = ops[i].mode;
        op->size = ops[i].size;
        op->fd_index = ops[i].fd_index;
        op->src = ops[i].src ? cella_strdup(ops[i].src) : NULL;
        if (ops[i].data_len) {
            op->data = cella_malloc(ops[i].data_len);
            memcpy(op->data, ops[i].data, ops[i].data_len);
            op->data_len = ops[i].data_len;
        }
    }
}

void opv_free(opv *o)
{
    for (uint32_t i = 0; i < o->n; i++) {
        cella_free(o->v[i].src);
        cella_free(o->v[i].dest);
        cella_free(o->v[i].data);
    }
    cella_free(o->v);
    memset(o, 0, sizeof(*o));
}
