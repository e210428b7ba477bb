/* The agent protocol: framed messages over one stream socket between the
 * parent (the daemon or `cella box`) and the agent, PID 1 of a sandbox.
 *
 *   frame   := header payload
 *   header  := len:u32 type:u16 flags:u16 id:u32      (12 bytes, little-endian)
 *   payload := len bytes, encoded with wire.h
 *
 * `id` names the exec a frame belongs to (0 for the sandbox itself). Parent
 * and agent are the same binary, so the version in SETUP only guards against
 * a mismatched binary swapped in under a running parent. */
#ifndef CELLA_AGENT_PROTO_H
#define CELLA_AGENT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

#define PROTO_VERSION 1
#define PROTO_HDR_SIZE 12
#define PROTO_MAX_PAYLOAD (16u << 20)
#define PROTO_CHUNK (64u << 10)          /* OUTPUT and STDIN payloads are at most this */
#define PROTO_MAX_ARGS 65536             /* argv or env entries */
#define PROTO_MAX_OPS 1024
#define PROTO_MAX_TIMEOUT_MS (30ull * 24 * 3600 * 1000)   /* 30 days */

enum proto_type {
    PROTO_SETUP = 1,     /* parent -> agent: proto_setup, with descriptors attached */
    PROTO_READY,         /* agent -> parent: setup done, commands may follow */
    PROTO_FAIL,          /* agent (or pre-exec child) -> parent: proto_error; the sandbox is dead */
    PROTO_EXEC,          /* parent -> agent: proto_exec */
    PROTO_STDIN,         /* parent -> agent: raw stdin bytes; flags PROTO_STDIN_EOF */
    PROTO_SIGNAL,        /* parent -> agent: u32 signal for the exec's process group */
    PROTO_STARTED,       /* agent -> parent: u32 pid (inside the sandbox) */
    PROTO_OUTPUT,        /* agent -> parent: raw bytes; flags = PROTO_STREAM_* */
    PROTO_STDIN_ACK,     /* agent -> parent: u32 bytes taken; flags PROTO_ACK_CLOSED */
    PROTO_EXIT,          /* agent -> parent: proto_exit; the exec is over */
    PROTO_ERROR,         /* agent -> parent: proto_error; the exec was refused */
    PROTO_LOG,           /* agent -> parent: one line of diagnostics */
    PROTO_OUTPUT_ACK,    /* parent -> agent: u32 stdout bytes consumed (EXEC_OUTPUT_WINDOW) */
    PROTO_TYPE_MAX
};

enum { PROTO_STREAM_STDOUT = 1, PROTO_STREAM_STDERR = 2 };
enum { PROTO_STDIN_EOF = 1 };
enum { PROTO_ACK_CLOSED = 1 };           /* the command closed its stdin: send no more */

typedef struct proto_hdr {
    uint32_t len;
    uint16_t type;
    uint16_t flags;
    uint32_t id;
} proto_hdr;

/* Appends a whole frame. */
void proto_put_frame(cbuf *out, uint16_t type, uint16_t flags, uint32_t id,
                     const void *payload, size_t n);
/* Starts a frame whose payload the caller appends; proto_end_frame fixes its
 * length. The returned mark survives the buffer compacting itself. */
size_t proto_begin_frame(cbuf *out, uint16_t type, uint16_t flags, uint32_t id);
void proto_end_frame(cbuf *out, size_t mark);
/* Zero-copy framing for data read straight from a descriptor: reserve room
 * for up to max payload bytes, fill them, then commit n <= max of them (or
 * commit nothing at all). Nothing may be appended in between. */
uint8_t *proto_reserve_frame(cbuf *out, size_t max);
void proto_commit_frame(cbuf *out, uint16_t type, uint16_t flags, uint32_t id, size_t n);
/* Encodes a FAIL frame into buf without allocating (for a child between
 * clone and exec). Returns the frame's length. */
size_t proto_encode_fail_static(uint8_t *buf, size_t cap, int errnum, const char *msg);
/* Looks at the front of `in`: 1 and the frame when one is complete (consume it
 * with cbuf_consume(in, PROTO_HDR_SIZE + h->len) after use), 0 when more bytes
 * are needed, -1 when the bytes cannot be a frame. */
int proto_peek_frame(const cbuf *in, proto_hdr *h, const uint8_t **payload, cella_err *err);
const char *proto_type_name(uint16_t type);

/* ---- setup ---------------------------------------------------------- */

/* One step of building the sandbox's root, run by the agent in order
 * (bubblewrap's SetupOp list). Paths in dest are inside the new root. */
enum proto_op_kind {
    OP_DIR = 1,          /* mkdir dest, mode */
    OP_FILE,             /* dest := data, mode */
    OP_SYMLINK,          /* dest -> src */
    OP_BIND,             /* bind host path src at dest */
    OP_BIND_FD,          /* bind descriptor fd_index (attached to SETUP) at dest */
    OP_ATTACH_FD,        /* move the detached mount fd_index to dest */
    OP_TMPFS,            /* new tmpfs at dest: size bytes, mode */
    OP_PROC,             /* new procfs at dest */
    OP_DEVPTS,           /* new devpts instance at dest */
    OP_MASK,             /* hide dest (a file: /dev/null over it; a dir: empty read-only tmpfs) */
    OP_REMOUNT_RO,       /* make the mount at dest read-only */
    OP_DETACH,           /* detach the mount at dest (a staging one; binds made from it stay) */
    OP_KIND_MAX
};

enum {
    OPF_RDONLY = 1 << 0,      /* mount read-only */
    OPF_OPTIONAL = 1 << 1,    /* skip quietly when the host source is missing */
    OPF_NOEXEC = 1 << 2,
    OPF_DEVICES = 1 << 3,     /* allow device nodes (only /dev's binds) */
    OPF_SRC_IN_ROOT = 1 << 4, /* OP_BIND: src is a path inside the new root */
    /* OP_BIND: src is relative to the directory descriptor fd_index (an
     * image's root): reached through the descriptor, never by a host path
     * that the new root (mounted on /tmp) or anything else could shadow. */
    OPF_SRC_AT = 1 << 5,
    /* OP_BIND of a directory: a read-only overlay of it rather than a bind.
     * Every sandbox opens the same inodes of the shared image, and flock()
     * and inotify attach to inodes: through a bind, one sandbox could block
     * another's flock() or watch its reads. An overlay's inodes are its
     * own. A plain bind where the kernel has no overlayfs for us. */
    OPF_OWN_INODES = 1 << 6,
};

typedef struct proto_op {
    uint32_t kind;
    uint32_t flags;
    uint32_t mode;
    int32_t fd_index;         /* index into the descriptors attached to SETUP, or -1 */
    uint64_t size;
    char *src;
    char *dest;
    uint8_t *data;
    size_t data_len;
} proto_op;

enum {
    SETUP_ROOT_MAPPED = 1 << 0,   /* uid 0 inside is mapped: the agent runs as root inside */
};

typedef struct proto_setup {
    uint32_t version;
    uint32_t flags;
    char *hostname;
    uint32_t uid, gid;            /* the sandbox user (1000) */
    uint64_t rlimit_fsize;        /* bytes, per file */
    uint64_t rlimit_nofile;
    uint8_t *bpf;                 /* struct sock_filter[], compiled by the parent */
    size_t bpf_len;
    proto_op *ops;
    uint32_t n_ops;
} proto_setup;

void proto_put_setup(cbuf *b, const proto_setup *s);
int proto_get_setup(const uint8_t *p, size_t n, proto_setup *s, cella_err *err);
void proto_setup_free(proto_setup *s);

/* ---- exec ----------------------------------------------------------- */

enum {
    EXEC_STDIN = 1 << 0,          /* STDIN frames follow; without it stdin is at EOF */
    /* argv names one of the agent's built-in file operations (agent/builtin.c)
     * instead of a program: it runs in a child exactly like a command (the
     * sandbox user, its limits, its cwd), so paths are resolved inside the
     * sandbox with the sandbox user's rights and nothing else. */
    EXEC_BUILTIN = 1 << 1,
    /* stdout flows in a window: at most PROTO_OUTPUT_WINDOW bytes sent and
     * not yet acknowledged (OUTPUT_ACK). For transfers without a cap (a
     * download): a slow client slows the command instead of growing the
     * daemon's memory. */
    EXEC_OUTPUT_WINDOW = 1 << 2,
};
#define PROTO_OUTPUT_WINDOW (1u << 20)

typedef struct proto_exec {
    char **argv;                  /* argv[0] is looked up in PATH when it has no '/' */
    char **env;                   /* "K=V" added over the sandbox's fixed environment */
    char *cwd;                    /* "" means /workspace */
    uint64_t timeout_ms;          /* 0: no limit */
    uint64_t stdout_cap, stderr_cap;
    uint32_t flags;
} proto_exec;

void proto_put_exec(cbuf *b, const proto_exec *e);
int proto_get_exec(const uint8_t *p, size_t n, proto_exec *e, cella_err *err);
void proto_exec_free(proto_exec *e);

enum {
    EXIT_TIMED_OUT = 1 << 0,
    EXIT_STDOUT_TRUNCATED = 1 << 1,
    EXIT_STDERR_TRUNCATED = 1 << 2,
    EXIT_NOT_STARTED = 1 << 3,    /* error says why (bad workdir, ...) */
};

typedef struct proto_exit {
    int32_t exit_code;            /* -1 when killed by a signal or never started */
    int32_t signal;               /* the killing signal, or 0 */
    uint32_t flags;
    uint64_t stdout_bytes;        /* produced, counting what the caps dropped */
    uint64_t stderr_bytes;
    uint64_t duration_us;
    uint64_t user_us, sys_us;
    uint64_t max_rss_kb;
    char *error;
} proto_exit;

void proto_put_exit(cbuf *b, const proto_exit *x);
int proto_get_exit(const uint8_t *p, size_t n, proto_exit *x, cella_err *err);
void proto_exit_free(proto_exit *x);

/* ---- errors --------------------------------------------------------- */

enum proto_err_code {
    PERR_BAD_REQUEST = 1,
    PERR_BUSY,                    /* too many execs at once */
    PERR_DUPLICATE_ID,
    PERR_SETUP,                   /* sandbox setup failed (PROTO_FAIL) */
    PERR_INTERNAL,
};

typedef struct proto_error {
    uint32_t code;
    int32_t errnum;
    char *message;
} proto_error;

void proto_put_error(cbuf *b, const proto_error *e);
int proto_get_error(const uint8_t *p, size_t n, proto_error *e, cella_err *err);
void proto_error_free(proto_error *e);
/* Decodes an ERROR or FAIL payload into err (its message and errno).
 * Always returns -1: the frame reports a failure either way. */
int proto_error_to_err(const uint8_t *p, size_t n, cella_err *err);

#endif
