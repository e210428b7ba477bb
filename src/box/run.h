/* Runs one command in a sandbox and relays its I/O, synchronously: the
 * client side of an exec for `cella box`. Output is written to the given
 * descriptors as it arrives; stdin is streamed with a window, so neither side
 * ever holds more than a bounded amount of it. */
#ifndef CELLA_BOX_RUN_H
#define CELLA_BOX_RUN_H

#include <stdbool.h>

#include "agent/proto.h"
#include "box/box.h"

typedef struct box_io {
    int stdin_fd;       /* -1: the command sees an immediate EOF */
    int stdout_fd;
    int stderr_fd;
    int cancel_fd;      /* -1, or a signalfd: a signal on it kills the command */
} box_io;

typedef struct box_result {
    proto_exit exit;
    bool oom_killed;    /* the kernel killed a process of the sandbox for memory meanwhile */
    int cancel_signal;  /* the signal that cancelled the run, or 0 */
    bool output_closed; /* our stdout or stderr stopped accepting output */
} box_result;

int box_run(box *b, uint32_t exec_id, const proto_exec *req, const box_io *io, box_result *res,
            cella_err *err);
void box_result_free(box_result *r);

#endif
