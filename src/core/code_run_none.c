/* Stands in for the interpreter's host interface (src/code/code_run.c)
 * while it is not in the tree: every run fails with NotImplementedError, so
 * the daemon, its worker pool and the routes build and answer. CMakeLists.txt
 * drops this file as soon as code_run.c exists. */
#include <stdlib.h>

#include "code/code_run.h"

int code_run_new(const char *src, size_t n, const code_run_opts *opts, code_run **out,
                 code_error *err)
{
    return code_error_set(err, "NotImplementedError", 0, 0,
                          "code mode's interpreter is not built into this binary yet");
}

void code_run_start(code_run *r, code_step *st) {}
void code_run_resume(code_run *r, const code_result *results, size_t n, code_step *st) {}

int code_run_dump(code_run *r, char **buf, size_t *len, code_error *err)
{
    return code_error_set(err, "NotImplementedError", 0, 0, "no interpreter");
}

int code_run_load(const char *buf, size_t len, const code_run_opts *opts, code_run **out,
                  code_step *st, code_error *err)
{
    return code_error_set(err, "NotImplementedError", 0, 0,
                          "code mode's interpreter is not built into this binary yet");
}

void code_run_free(code_run *r) {}
void code_step_clear(code_step *st) {}
bool code_run_done(const code_run *r) { return true; }
