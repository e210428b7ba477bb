/* The agent's file operations (`fs OP key=value...`), run in an exec's
 * child as the sandbox user, inside the sandbox's mount namespace: every
 * path is resolved there, with that user's rights, so a symlink in the
 * workspace can only ever lead to what the sandbox user could open anyway
 * (DESIGN rule 3: the daemon never resolves a sandbox path on the host).
 *
 * Protocol (between core/fs.c and these functions):
 *   argv:   "fs" OP then "key=value" words; a key may repeat (include=...).
 *   stdin:  a write's or an extract's bytes; otherwise empty.
 *   stdout: one JSON object, the operation's result in iii's shape; the
 *           streaming ops (cat, tar-create) write one JSON line first, then
 *           the bytes.
 *   exit:   a BUILTIN_* status (agent/builtin.h); on failure the first line
 *           of stderr is the message the caller sees.
 * Relative paths are relative to the working directory (/workspace). */
#ifndef CELLA_AGENT_FS_INT_H
#define CELLA_AGENT_FS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "agent/builtin.h"
#include "util/jsonw.h"

typedef struct fs_args {
    char *const *kv;              /* "key=value" words, NULL-terminated */
} fs_args;

/* The last value of key, or NULL. */
const char *fs_arg(const fs_args *a, const char *key);
/* Every value of a repeated key, in order; returns the count (at most max). */
size_t fs_arg_all(const fs_args *a, const char *key, const char **out, size_t max);
/* "1"/"true" and "0"/"false"; def when absent. -1 (and a message) when malformed. */
int fs_arg_bool(const fs_args *a, const char *key, bool def, bool *out);
int fs_arg_u64(const fs_args *a, const char *key, uint64_t def, uint64_t *out);
/* An octal mode "0644" (at most 07777). */
int fs_arg_mode(const fs_args *a, const char *key, unsigned def, unsigned *out);
/* A path argument that must be present and non-empty. */
int fs_arg_path(const fs_args *a, const char *key, const char **out);

/* Prints the message (first line of stderr) and returns status. */
int fs_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The status for an errno: ENOENT -> NOT_FOUND, EEXIST -> EXISTS, ... */
int fs_status_for(int errnum);
/* "<what> <path>: <strerror>" with the status for errnum. ENOENT reads
 * "file not found: <path>", as iii says it. */
int fs_fail_errno(int errnum, const char *what, const char *path);

/* path made absolute against the working directory (lexically: no
 * symlink is followed). Returns a malloc'd string. */
char *fs_abs(const char *path);

/* Each op fills w with its result object and returns a BUILTIN_* status.
 * fs.c: ls stat mkdir write read cat rm chmod mv */
typedef int (*fs_op_fn)(const fs_args *a, jsonw *w);
/* fs_search.c */
int fs_op_grep(const fs_args *a, jsonw *w);
int fs_op_sed(const fs_args *a, jsonw *w);
int fs_op_glob(const fs_args *a, jsonw *w);
/* fs_tar.c: tar-create writes its header line and the archive to stdout
 * itself; tar-extract reads the archive from stdin. */
int fs_op_tar_create(const fs_args *a, jsonw *w);
int fs_op_tar_extract(const fs_args *a, jsonw *w);

/* Shared helpers, in fs.c. */
/* Writes all of p to fd 1 (stdout). -1 on failure. */
int fs_stdout(const void *p, size_t n);
/* Atomically replaces path with the bytes of in_fd (or data when in_fd < 0):
 * a hidden O_TMPFILE (or, where the filesystem lacks it, a temporary
 * sibling), fsync, fchmod, then rename over path. Killed half-way, it
 * leaves nothing behind. limit: bytes allowed (quota), UINT64_MAX for
 * none. expect: the exact byte count required (a transfer's declared
 * length; anything else replaces nothing), UINT64_MAX for any. *written
 * gets the size. Returns a BUILTIN_* status, its message printed. */
int fs_write_atomic(const char *path, unsigned mode, int in_fd, const void *data, size_t n,
                    uint64_t limit, uint64_t expect, uint64_t *written);
/* Bytes the workspace holds now (allocated blocks), walking /workspace
 * without following symlinks. */
uint64_t fs_workspace_usage(void);

#endif
