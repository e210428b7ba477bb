/* The frames between the daemon (core/code_pool.c) and a code worker
 * (core/code_worker.c) over their socketpair. A frame is a 32-bit
 * little-endian length (at most CODE_WIRE_MAX_FRAME) and that many bytes:
 * a message type byte, then fields, each a tag byte, a 32-bit little-endian
 * length and the bytes. Strings carry a trailing NUL inside their length, so
 * a decoded message points into its frame's buffer without copying; numbers
 * are 8-byte little-endian fields. Decoding checks every length, tag and
 * count against the frame: the daemon reads frames from a process that runs
 * untrusted code, and the worker trusts nothing it did not check either.
 *
 * Every request gets exactly one answer, in order:
 *   RUN    {handle, code, inputs, functions, limits, tla} -> STEP
 *   RESUME {handle, results}                              -> STEP | FAIL
 *   DUMP   {handle}                                       -> DUMPED | FAIL
 *   LOAD   {handle, bytes, limits}                        -> STEP (the pending calls)
 *   FREE   {handle}                                       -> OK
 * (every request also carries out_max, the print() output a step keeps;
 * a LOAD's limits are the run's own, and cap those its dump records)
 * and the worker sends READY once, before its first request, when its
 * sandbox (rlimits, seccomp) is in place (or FAIL, and exits). A step whose
 * run ended (done) frees the run in the worker: no FREE follows. */
#ifndef CELLA_CORE_CODE_WIRE_H
#define CELLA_CORE_CODE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/code_run.h"
#include "util/buf.h"

/* Bounds what either side allocates for one frame; a request body is at
 * most max_body_bytes (16 MiB by default), dumps are about as big as the
 * program and the answers it was given. */
#define CODE_WIRE_MAX_FRAME (64u << 20)
/* Counts a frame may hold (inputs, functions, calls, results, pending). */
#define CODE_WIRE_MAX_ITEMS 65536u

typedef enum code_wire_type {
    CW_RUN = 1,
    CW_RESUME = 2,
    CW_DUMP = 3,
    CW_LOAD = 4,
    CW_FREE = 5,
    CW_READY = 16,
    CW_STEP = 17,
    CW_DUMPED = 18,
    CW_OK = 19,
    CW_FAIL = 20,
} code_wire_type;

/* A string inside a frame: p[n] is NUL. */
typedef struct code_wire_str {
    const char *p;
    size_t n;
} code_wire_str;

typedef struct code_wire_call {
    uint64_t id;
    code_wire_str function, args_json, kwargs_json;
} code_wire_call;

/* One message, either direction. Strings point into the frame it was
 * decoded from (or, to encode, anywhere); arrays are the decoder's
 * (code_wire_msg_free). */
typedef struct code_wire_msg {
    code_wire_type type;
    uint32_t handle;
    /* RUN */
    code_wire_str code;
    code_input *inputs;
    size_t ninputs;
    const char **functions;
    size_t nfunctions;
    bool has_functions;           /* false: every unbound name is a host call */
    code_limits limits;
    bool top_level_await;
    uint64_t out_max;             /* requests: print() output a step keeps; the rest is cut */
    /* RESUME */
    code_result *results;
    size_t nresults;
    /* LOAD, DUMPED */
    code_wire_str bytes;
    /* STEP */
    code_step_kind kind;
    bool done;                    /* the run ended (and was freed) */
    code_wire_str result_json;
    code_wire_call *calls;
    size_t ncalls;
    uint64_t *pending;
    size_t npending;
    code_wire_str out;
    bool out_truncated;
    uint64_t duration_us;
    /* STEP (ERROR), FAIL */
    code_wire_str err_type, err_msg;
    int64_t err_line;
} code_wire_msg;

/* Appends m as one frame (length prefix included) to out. -1 when it would
 * exceed CODE_WIRE_MAX_FRAME (out is then as it was). */
int code_wire_encode(const code_wire_msg *m, cbuf *out);
/* Decodes one frame's payload (without its length prefix). The strings of
 * *m point into buf, which must outlive it. -1 on anything malformed, with
 * why in err (a static string). */
int code_wire_decode(const uint8_t *buf, size_t n, code_wire_msg *m, const char **err);
void code_wire_msg_free(code_wire_msg *m);

/* Encodes a worker's step (the worker side). */
void code_wire_from_step(code_wire_msg *m, const code_step *st, bool done, uint64_t out_max);

/* Frame I/O on a blocking stream socket. read: 0 and the payload in buf
 * (reset first); 1 at a clean end of stream before a frame; -1 on an error
 * (errno), a short frame or a length over max (EPROTO), or the deadline
 * (monotonic ns, 0: none) passed (ETIMEDOUT). */
int code_wire_read(int fd, cbuf *buf, size_t max, int64_t deadline);
int code_wire_write(int fd, const cbuf *frame);

#endif
