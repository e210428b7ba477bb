/* `cella box` options, parsed without side effects (unit tested). */
#ifndef CELLA_CLI_BOX_ARGS_H
#define CELLA_CLI_BOX_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

#define BOX_MAX_TIMEOUT_MS (7ull * 24 * 3600 * 1000)
#define BOX_DEFAULT_OUTPUT_LIMIT (1ull << 20)

typedef struct box_opts {
    const char *image;
    uint64_t memory_mb;
    uint32_t pids;
    uint32_t cpu_milli;
    uint64_t timeout_ms;          /* 0: none */
    uint64_t tmp_mb;
    uint64_t output_limit;        /* bytes kept per stream */
    const char *workspace;        /* NULL: a fresh one, removed afterwards */
    const char *workdir;          /* NULL: /workspace */
    const char *state_dir;
    const char *result_json;
    char **env;                   /* "K=V", NULL-terminated */
    char **argv;                  /* the command (borrowed from the caller's argv) */
    bool help;
    int verbose;
} box_opts;

/* args are what follows "box" on the command line. */
int box_args_parse(int argc, char **argv, box_opts *o, cella_err *err);
void box_opts_free(box_opts *o);
extern const char box_usage[];

#endif
