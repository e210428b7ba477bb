/* Gitignore-style path patterns (grep's include/exclude filters, glob). */
#ifndef CELLA_UTIL_GLOB_H
#define CELLA_UTIL_GLOB_H
#endif
