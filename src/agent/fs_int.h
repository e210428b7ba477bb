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

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "agent/builtin.h"
#include "util/jsonw.h"

/* Deeper trees than this are refused by the walks (rm -r, chmod -R, the
 * quota's, grep/sed/glob, tar): each level holds a descriptor and a stack
 * frame. */
#define FS_MAX_DEPTH 256
/* tar: output is gathered into writes of this size, files stream through
 * it; extraction reads the archive in pieces of it. */
#define TAR_CHUNK (256u << 10)

typedef struct fs_args {
    char *const *kv;              /* "key=value" words, NULL-terminated */
} fs_args;

/* The last value of key, or NULL. */
const char *fs_arg(const fs_args *a, const char *key);
/* Every value of a repeated key, in order; returns the count (at most max). */
size_t fs_arg_all(const fs_args *a, const char *key, const char **out, size_t max);
/* How many times key is given. */
size_t fs_arg_count(const fs_args *a, const char *key);
/* "1"/"true" and "0"/"false"; def when absent. -1 (and a message) when malformed. */
int fs_arg_bool(const fs_args *a, const char *key, bool def, bool *out);
int fs_arg_u64(const fs_args *a, const char *key, uint64_t def, uint64_t *out);
/* An octal mode "0644" (at most 07777). */
int fs_arg_mode(const fs_args *a, const char *key, unsigned def, unsigned *out);
/* Drops trailing "/" and "/." from path, in place, down to "/" at most.
 * Why: the kernel reads "lnk/" and "lnk/." as the directory a symlink lnk
 * points at, so an operation that must act on the link itself (rm, stat,
 * chmod, mv, write) would act on its target instead. One rule for every
 * operation: a path names the entry itself, whatever it ends with. */
void fs_norm_path(char *path);
/* A path argument that must be present and non-empty, normalised with
 * fs_norm_path. */
int fs_arg_path(const fs_args *a, const char *key, const char **out);

/* Prints the message (first line of stderr) and returns status. */
int fs_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The status for an errno: ENOENT -> NOT_FOUND, EEXIST -> EXISTS, ... */
int fs_status_for(int errnum);
/* "<what> <path>: <strerror>" with the status for errnum. ENOENT reads
 * "file not found: <path>", as iii says it. */
int fs_fail_errno(int errnum, const char *what, const char *path);
/* The failure to open path as a directory (O_DIRECTORY, so that anything
 * else fails before it could block, a FIFO): ENOTDIR reads "not a
 * directory: <path>"; other errors as fs_fail_errno says them. */
int fs_fail_opendir(int errnum, const char *what, const char *path);

/* path made absolute against the working directory (lexically: no
 * symlink is followed). Returns a malloc'd string. */
char *fs_abs(const char *path);

/* Each op fills w with its result object and returns a BUILTIN_* status.
 * fs_read.c: ls stat read cat; fs_write.c: mkdir write; fs_tree.c: rm chmod mv */
typedef int (*fs_op_fn)(const fs_args *a, jsonw *w);
int fs_op_ls(const fs_args *a, jsonw *w);
int fs_op_stat(const fs_args *a, jsonw *w);
int fs_op_read(const fs_args *a, jsonw *w);
/* cat writes its header line and the bytes to stdout itself. */
int fs_op_cat(const fs_args *a, jsonw *w);
int fs_op_mkdir(const fs_args *a, jsonw *w);
int fs_op_write(const fs_args *a, jsonw *w);
int fs_op_rm(const fs_args *a, jsonw *w);
int fs_op_chmod(const fs_args *a, jsonw *w);
int fs_op_mv(const fs_args *a, jsonw *w);
/* fs_grep.c: grep and glob; fs_sed.c: sed (both on fs_walk.h's walk) */
int fs_op_grep(const fs_args *a, jsonw *w);
int fs_op_sed(const fs_args *a, jsonw *w);
int fs_op_glob(const fs_args *a, jsonw *w);
/* sed's replacement (iii's syntax, Rust regex's) rewritten for
 * pcre2_substitute, appended to out (fs_sed.c says how). */
void sed_repl_translate(cbuf *out, const char *r);
/* fs_tar_create.c: writes its header line and the archive to stdout itself. */
int fs_op_tar_create(const fs_args *a, jsonw *w);
/* fs_tar_extract.c: reads the archive from stdin. */
int fs_op_tar_extract(const fs_args *a, jsonw *w);
/* An entry's name (or a hard link's target), lexically cleaned into out
 * (cap bytes): "." and empty components dropped, "" for the target
 * itself; *slash says whether it ended with "/", *depth counts its
 * components. NULL, or why the name is unsafe (absolute, "..", too long). */
const char *tar_clean_name(const char *in, char *out, size_t cap, bool *slash, unsigned *depth);

/* fs_beneath.c: a path resolved beneath the directory root (whose absolute
 * path is root_abs), symlinks followed while they stay beneath it, without
 * openat2 (the file says why that is safe). All but the last component
 * must be directories (made, 0755, when create; made(ctx, rel) hears of
 * each); a last component that is a symlink is followed too. -1 with
 * errno: EXDEV when the path leads out, ELOOP past 40 symlinks, ENOTDIR,
 * ENOENT, ENAMETOOLONG. */
typedef struct fs_beneath {
    int dir;                      /* O_PATH: the directory the leaf is in (the caller's to close) */
    char parent[PATH_MAX];        /* that directory relative to the root, no symlink in it */
    char leaf[NAME_MAX + 1];      /* no symlink (unless swapped in since); "." for dir itself */
} fs_beneath;
int fs_resolve_beneath(int root, const char *root_abs, const char *rel, bool create,
                       void (*made)(void *ctx, const char *rel), void *ctx, fs_beneath *out);

/* fs_write.c: path's parent directory into buf ("." or "/" at the top). */
void fs_parent_of(const char *path, char *buf, size_t n);
/* mkdir -p: every missing directory of path, mode for the last, 0755 above. */
int fs_make_dirs(const char *path, unsigned mode, bool *created);
/* fs_tree.c: empties the directory fd (consumed) and its subdirectories;
 * symlinks are unlinked, never followed. */
int fs_rm_tree(int fd, const char *path, int depth);

/* Shared helpers, in fs.c. */
/* The first step of a walk's level: the directory fd (consumed) as a DIR,
 * or NULL with *rc the status (deeper than FS_MAX_DEPTH, or fdopendir
 * failing), its message naming what and path. */
DIR *fs_open_level(int fd, const char *what, const char *path, int depth, int *rc);
/* Writes all of p to fd 1 (stdout). -1 on failure. */
int fs_stdout(const void *p, size_t n);
/* The names in the directory d but "." and "..", sorted bytewise (so a
 * walk comes out in the same order every time); *count gets how many.
 * Free them with fs_free_names. */
char **fs_list_dir(DIR *d, size_t *count);
/* Sorts n malloc'd strings bytewise. */
void fs_sort_names(char **names, size_t n);
/* Frees n malloc'd strings and the array that holds them. */
void fs_free_names(char **names, size_t n);
/* Opens name in dir for reading only if it is a regular file: O_NONBLOCK
 * so that a FIFO swapped in since the caller's lstat cannot block the
 * open, fstat (into st) to confirm what was opened; follow: whether a
 * symlink as the last component is followed. -1 with errno (EINVAL: not a
 * regular file). */
int fs_open_regular(int dir, const char *name, bool follow, struct stat *st);
/* A hidden temporary's name, ".cella-<random>.tmp", in dir (NULL: no
 * directory part); tries, the attempt, varies it when getrandom fails.
 * Without a directory it fits in FS_TMP_NAME_MAX bytes. */
#define FS_TMP_NAME_MAX 64
void fs_tmp_name(char *buf, size_t n, const char *dir, int tries);
/* Atomically replaces path with the bytes of in_fd (or data when in_fd < 0):
 * a hidden O_TMPFILE (or, where the filesystem lacks it, a temporary
 * sibling), fsync, fchmod, then rename over path. Killed half-way, it
 * leaves nothing behind. q: the call's quota transaction (fs_quota.h), or
 * NULL; a file on /workspace's mount is reserved as it is written and
 * committed under the quota's lock. expect: the exact byte count required
 * (a transfer's declared length, reserved before a byte is read; anything
 * else replaces nothing), UINT64_MAX for any. *written gets the size.
 * Returns a BUILTIN_* status, its message printed. */
typedef struct fsq fsq;
int fs_write_atomic(const char *path, unsigned mode, int in_fd, const void *data, size_t n,
                    fsq *q, uint64_t expect, uint64_t *written);

#endif
