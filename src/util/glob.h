/* Gitignore-style path patterns (grep's and sed's include/exclude filters,
 * the glob operation). Pure, allocation-free and bounded: a match costs at
 * most O(|pattern| x |path|) steps, whatever either holds (no backtracking
 * that can explode; see glob.c for the grammar).
 *
 * Paths are relative to the root of a walk, '/'-separated, without a
 * leading "/" or "./" ("src/main.c"); empty segments are ignored. */
#ifndef CELLA_UTIL_GLOB_H
#define CELLA_UTIL_GLOB_H

#include <stdbool.h>

/* Longer patterns are refused (glob_check) and match nothing. */
#define GLOB_MAX_PATTERN 4096

/* 0 when pattern is usable; -1 with *why set to a static reason otherwise
 * (empty, longer than GLOB_MAX_PATTERN, or nothing but slashes). */
int glob_check(const char *pattern, const char **why);

/* True when pattern matches path, an entry that is a directory when is_dir
 * (a pattern ending in '/' matches directories only). A pattern that
 * glob_check refuses matches nothing. */
bool glob_match(const char *pattern, const char *path, bool is_dir);

/* False only when no path below the directory dir ("dir/...") can match
 * pattern, so a walk may skip it. Conservative: true whenever unsure. */
bool glob_may_match_under(const char *pattern, const char *dir);

#endif
