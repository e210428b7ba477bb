/* What code_run.c records of a run so that code_dump.c can write it and load
 * it again by replay: the run is deterministic (no clock, no randomness, a
 * fixed hash), so a paused run is fully described by its source, its options
 * and the host's answers in the order they were given. Loading recompiles the
 * source and replays the answers; nothing of the interpreter's memory is ever
 * read from outside, which is what makes loading untrusted bytes safe. */
#ifndef CELLA_CODE_RUN_INT_H
#define CELLA_CODE_RUN_INT_H

#include "code/code_run.h"

/* One answer, owned copies (malloc). */
typedef struct code_rec_result {
    uint64_t call_id;
    char *value_json;            /* NULL when exc_type is set */
    char *exc_type, *exc_message;
} code_rec_result;

/* One code_run_resume call that was accepted. */
typedef struct code_rec_batch {
    code_rec_result *results;
    size_t n;
} code_rec_batch;

/* One host call the run made, in order (ids are 1, 2, 3, ...). */
typedef struct code_rec_call {
    char *function;              /* owned */
} code_rec_call;

typedef struct code_run_record {
    char *src;                   /* owned copy */
    size_t src_len;
    code_limits limits;          /* as given (0 = default), not resolved */
    code_input *inputs;          /* owned copies */
    size_t ninputs;
    char **functions;            /* owned; NULL when none declared */
    size_t nfunctions;
    bool top_level_await;
    code_rec_batch *batches;
    size_t nbatches;
    code_rec_call *calls;
    size_t ncalls;
    uint64_t out_len;            /* bytes of output handed over so far */
} code_run_record;

/* The record of r (owned by r). */
const code_run_record *code_run_record_of(const code_run *r);
/* Discards the output a replay produces until out_len bytes have been
 * skipped (code_dump.c calls it before replaying). */
void code_run_skip_output(code_run *r, uint64_t out_len);

#endif
