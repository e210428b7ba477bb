/* What grep, sed and glob (fs_grep.c, fs_sed.c) share, in fs_walk.c: the
 * call's time budget, text checks, regular expressions (PCRE2) compiled
 * under limits, include/exclude filters and the walk of a tree.
 *
 * Everything a request controls is bounded: the pattern's cost (no
 * backreferences or subroutine calls, match/depth/heap limits per line, a
 * deadline per call), the memory (files read in chunks, a line is looked at
 * through its first 1 MiB, sed edits files up to 64 MiB), the output (8 MiB
 * of JSON) and the walk (no symlink followed, nothing but regular files
 * opened, FS_MAX_DEPTH levels at most). */
#ifndef CELLA_AGENT_FS_WALK_H
#define CELLA_AGENT_FS_WALK_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "agent/fs_int.h"

#define SEARCH_MAX_FILTERS 256        /* include/exclude patterns per call */
#define SEARCH_READ (256u << 10)      /* bytes per read */
#define SEARCH_PROBE 8192             /* a NUL in this many first bytes: binary */
#define SEARCH_OUT_CAP (8u << 20)     /* JSON bytes a result may take */
#define SEARCH_DEADLINE_MS 30000

/* Walk controls, besides 0 (go on) and a BUILTIN_* status (> 0, printed). */
enum { WALK_SKIP = -1, WALK_STOP = -2, WALK_DEADLINE = -3 };

/* ---- time and text ------------------------------------------------------- */

/* The end of the call's budget in ns, 0 for none (deadline_ms=0). */
uint64_t fs_deadline_at(uint64_t ms);
/* Whether the budget that ends at end (fs_deadline_at) is spent. */
bool fs_past(uint64_t end);
/* utf8_valid with a fast path for the ASCII most source files are. */
bool fs_text_valid(const uint8_t *p, size_t n);
/* The path made absolute (fs_abs) without "." segments, repeated or
 * trailing slashes; ".." stays (resolving it would need the symlinks).
 * Returns a malloc'd string. */
char *fs_tidy_abs(const char *path);

/* ---- regular expressions ------------------------------------------------- */

typedef struct rx {
    pcre2_code *code;
    pcre2_match_context *mctx;
    pcre2_match_data *md;
    pcre2_jit_stack *stack;
} rx;

/* Compiles pattern (literal: matched as it is), refusing what could make a
 * match cost explode. Returns a BUILTIN_* status, its message printed. */
int rx_compile(rx *r, const char *pattern, bool literal, bool icase);
void rx_free(rx *r);
/* The message for a failed match in file:line (into buf). */
const char *rx_error(int rc, const char *file, uint64_t line, char *buf, size_t n);

/* ---- filters and the walk ------------------------------------------------ */

typedef struct walk_filters {
    const char *inc[SEARCH_MAX_FILTERS], *exc[SEARCH_MAX_FILTERS];
    size_t ninc, nexc;
} walk_filters;

/* The include and exclude arguments, checked. A BUILTIN_* status. */
int walk_filters_load(const fs_args *a, walk_filters *f);

typedef struct walk walk;
struct walk {
    /* Called for each entry: dir and name open it (follow: the root, given
     * by name, whose symlinks are the caller's to follow), st is its lstat
     * (the root's stat). Returns 0, a WALK_* control or a status. */
    int (*visit)(walk *wk, int dir, const char *name, const struct stat *st, bool follow);
    char *path;                   /* the entry's absolute path */
    size_t len, cap;
    size_t rel;                   /* where the part relative to the root starts */
    size_t root_len;
    bool marked;                  /* a directory above matched an include */
    bool mark_next;               /* visit's answer for a directory: mark below */
    uint64_t deadline;
    const char *op;
};

/* Walks path: a directory's tree (when recursive), or path itself (a file
 * named by the caller is searched whatever include and exclude say: they
 * filter the paths below a directory). wk->path is the caller's to free. */
int walk_root(walk *wk, const char *path, bool recursive, bool dir_only);

/* grep's and sed's visitors start here. True when the entry is a regular
 * file to open: one below the root that the filters let through, or the
 * root itself. Otherwise false, and *rc is what the visitor returns: 0 to
 * enter a directory, WALK_SKIP, or a status (the root is not a regular
 * file). */
bool walk_wants_file(walk *wk, const walk_filters *f, const char *name, const struct stat *st,
                     bool follow, int *rc);

#endif
