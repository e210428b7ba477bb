/* The daemon's side of the agent protocol: many execs at once over one
 * sandbox's socket, each waited on by its own thread (an HTTP connection).
 *
 * A reader thread per sandbox reads every frame the agent sends and files it
 * under its exec; a waiter is woken through its exec's eventfd, so it can
 * also watch its client's socket and notice a client that went away. The
 * reader never blocks on a waiter: output is bounded by the agent's per-exec
 * caps, so a slow waiter cannot make the reader's memory grow without limit.
 * Sends (EXEC, STDIN, SIGNAL) come from the waiters, one at a time per
 * sandbox. */
#ifndef CELLA_BOX_MUX_H
#define CELLA_BOX_MUX_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/proto.h"
#include "box/box.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct mux_box mux_box;
typedef struct mux_exec mux_exec;

/* Called once, from the reader thread, when the agent dies on its own. */
typedef void (*mux_death_fn)(void *arg, const char *why);

int mux_attach(box *b, mux_death_fn on_death, void *arg, mux_box **out, cella_err *err);
/* Stops the reader and fails the execs still running ("the sandbox was
 * stopped"); afterwards the caller may destroy the box. */
void mux_detach(mux_box *m);
/* Drops the owner's hold (after mux_detach); the memory goes when the last
 * exec is freed too. */
void mux_free(mux_box *m);
bool mux_dead(mux_box *m);

typedef struct mux_exec_req {
    const proto_exec *exec;
    const uint8_t *stdin_data;    /* copied; ignored unless has_stdin */
    size_t stdin_len;
    bool has_stdin;
    bool stream;                  /* output is taken as it comes (mux_exec_take) */
    /* stream mode: stdout in a window (EXEC_OUTPUT_WINDOW), reopened as
     * mux_exec_take hands it on; for transfers with no output cap */
    bool window;
    /* stdin arrives later through mux_exec_feed, ended by mux_exec_feed_end */
    bool stdin_stream;
} mux_exec_req;

int mux_exec_start(mux_box *m, const mux_exec_req *r, mux_exec **out, cella_err *err);

enum {
    MUX_DONE = 1 << 0,            /* answered (result or failure) */
    MUX_OUTPUT = 1 << 1,          /* stream mode: output waits to be taken */
    MUX_CLIENT_GONE = 1 << 2,     /* client_fd hung up */
};
/* Waits until something happens or timeout_ms passes (-1: no limit), feeding
 * stdin as the agent takes it. client_fd (-1: none) is watched for hang-up.
 * Returns the MUX_* flags now true (0 on timeout). */
int mux_exec_wait(mux_exec *x, int client_fd, int timeout_ms);
/* Stream mode: takes the oldest output chunk into out (appended) and its
 * stream (PROTO_STREAM_*). False when none is queued. */
bool mux_exec_take(mux_exec *x, int *stream, cbuf *out);
/* Streamed stdin (stdin_stream): queues p[0..n) and sends what the window
 * allows; blocks while more than MUX_FEED_HIGH bytes wait, so a fast
 * uploader is held to the command's pace. Returns 0, or the MUX_* flags
 * that stopped it (MUX_DONE: the command finished or failed first;
 * MUX_CLIENT_GONE: client_fd hung up). */
int mux_exec_feed(mux_exec *x, const void *p, size_t n, int client_fd);
/* The end of streamed stdin. */
void mux_exec_feed_end(mux_exec *x);
/* Whether the command closed its stdin (exited, above all): it takes no
 * more of what is fed. */
bool mux_exec_stdin_closed(mux_exec *x);
#define MUX_FEED_HIGH (1u << 20)
/* Asks the agent to kill the command's process group (SIGKILL). */
void mux_exec_kill(mux_exec *x);

typedef struct mux_result {
    proto_exit exit;
    cbuf out[3];                  /* [1] stdout, [2] stderr (not in stream mode) */
    bool oom_killed;              /* the sandbox's memory limit killed something meanwhile */
    uint32_t refused;             /* PERR_* when the agent refused the exec, else 0 */
} mux_result;

/* After MUX_DONE: the result (ownership moves to res), or -1 and err when
 * the agent refused the exec or the sandbox died or was stopped. */
int mux_exec_result(mux_exec *x, mux_result *res, cella_err *err);
void mux_result_free(mux_result *r);
/* Kills the command if it is still running and frees the exec. */
void mux_exec_free(mux_exec *x);

#endif
