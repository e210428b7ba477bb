/* cella-bench-startup: how long a sandboxed command takes from start to
 * finish, against the bare command and against bubblewrap with the same binds,
 * measured in one run and interleaved (so drift hits every variant alike).
 *
 *   cella-bench-startup [--cella PATH] [--bwrap PATH] [--runs N] [--write FILE]
 *
 * Prints a Markdown table of medians, 90th percentiles and ratios, and peak
 * RSS (cella and its agent, as reported by wait4). With --write, replaces the
 * block between the markers below in FILE (docs/performance.md). */

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define BEGIN_MARK "<!-- bench:startup:begin -->"
#define END_MARK "<!-- bench:startup:end -->"

extern char **environ;

typedef struct variant {
    const char *name;
    char *argv[MAX_ARGS];
    double *ms;
    long *rss_kb;
} variant;

static void fill(variant *v, const char *name, char *const prefix[], char *const cmd[])
{
    int n = 0;
    v->name = name;
    for (int i = 0; prefix && prefix[i]; i++)
        push(v->argv, &n, prefix[i]);
    for (int i = 0; cmd[i]; i++)
        push(v->argv, &n, cmd[i]);
}

int main(int argc, char **argv)
{
    const char *cella = "./build/cella", *bwrap = "/usr/bin/bwrap", *out = NULL;
    int runs = 200;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cella") && i + 1 < argc)
            cella = argv[++i];
        else if (!strcmp(argv[i], "--bwrap") && i + 1 < argc)
            bwrap = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--write") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--cella PATH] [--bwrap PATH] [--runs N] [--write FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 5)
        runs = 5;
    bool have_bwrap = access(bwrap, X_OK) == 0;
    char ws[] = "/tmp/cella-bench-ws-XXXXXX";
    if (!mkdtemp(ws)) {
        perror("mkdtemp");
        return 1;
    }
    char *cmd_true[] = {"/bin/true", NULL};
    char *cmd_py[] = {"/usr/bin/python3", "-c", "pass", NULL};
    char *cella_prefix[] = {(char *)cella, "box", "--", NULL};
    variant v[6];
    memset(v, 0, sizeof(v));
    int nv = 0;
    char **cmds[2] = {cmd_true, cmd_py};
    const char *labels[2][3] = {{"/bin/true", "cella box -- /bin/true", "bwrap /bin/true"},
                                {"python3 -c pass", "cella box -- python3 -c pass",
                                 "bwrap python3 -c pass"}};
    for (int c = 0; c < 2; c++) {
        fill(&v[nv++], labels[c][0], NULL, cmds[c]);
        fill(&v[nv++], labels[c][1], cella_prefix, cmds[c]);
        if (have_bwrap) {
            v[nv].name = labels[c][2];
            bwrap_argv(v[nv++].argv, bwrap, ws, cmds[c]);
        }
    }
    for (int i = 0; i < nv; i++) {
        v[i].ms = calloc((size_t)runs, sizeof(double));
        v[i].rss_kb = calloc((size_t)runs, sizeof(long));
    }
    /* Warm up caches, then interleave. */
    for (int w = 0; w < 10; w++)
        for (int i = 0; i < nv; i++) {
            long rss;
            if (run_once(v[i].argv, &rss) < 0) {
                fprintf(stderr, "bench: '%s' failed\n", v[i].name);
                return 1;
            }
        }
    for (int r = 0; r < runs; r++)
        for (int i = 0; i < nv; i++) {
            v[i].ms[r] = run_once(v[i].argv, &v[i].rss_kb[r]);
            if (v[i].ms[r] < 0) {
                fprintf(stderr, "bench: '%s' failed\n", v[i].name);
                return 1;
            }
        }
    rmdir(ws);

    char block[8192];
    size_t off = bench_header(block, sizeof(block), runs);
    off += (size_t)snprintf(block + off, sizeof(block) - off,
                            "| command | median ms | p90 ms | vs bare | vs bwrap | peak RSS KiB |\n"
                            "|---|---:|---:|---:|---:|---:|\n");
    double med[6];
    for (int i = 0; i < nv; i++) {
        qsort(v[i].ms, (size_t)runs, sizeof(double), cmp_double);
        qsort(v[i].rss_kb, (size_t)runs, sizeof(long), cmp_long);
        med[i] = pct(v[i].ms, runs, 0.5);
    }
    int per = have_bwrap ? 3 : 2;
    for (int i = 0; i < nv; i++) {
        int base = (i / per) * per;
        char vs_bwrap[32] = "";
        if (have_bwrap && i % per != 2)
            snprintf(vs_bwrap, sizeof(vs_bwrap), "%.2f", med[i] / med[base + 2]);
        off += (size_t)snprintf(block + off, sizeof(block) - off,
                                "| `%s` | %.2f | %.2f | %.2f | %s | %ld |\n", v[i].name, med[i],
                                pct(v[i].ms, runs, 0.9), med[i] / med[base], vs_bwrap,
                                v[i].rss_kb[runs / 2]);
    }
    if (have_bwrap) {
        off += (size_t)snprintf(block + off, sizeof(block) - off, "\nSandbox overhead (median minus bare):\n\n");
        for (int c = 0; c < nv / per; c++) {
            double oc = med[c * per + 1] - med[c * per], ob = med[c * per + 2] - med[c * per];
            off += (size_t)snprintf(block + off, sizeof(block) - off,
                                    "- `%s`: cella %.2f ms, bwrap %.2f ms, ratio %.2f\n",
                                    labels[c][0], oc, ob, oc / ob);
        }
    } else {
        off += (size_t)snprintf(block + off, sizeof(block) - off,
                                "\n(bubblewrap not found: no comparison)\n");
    }
    fputs(block, stdout);
    if (out && write_block(out, BEGIN_MARK, END_MARK, block) < 0) {
        perror(out);
        return 1;
    }
    return 0;
}
