/* `cella code-worker`: one process of code mode's worker pool
 * (core/code_pool.c starts them). It inherits its socketpair end on
 * CODE_WORKER_FD, closes every other descriptor, sets its rlimits, gives up
 * root, and loads a strict seccomp filter (core/code_seccomp.c) that leaves
 * it read/write on that socket and memory management, nothing else; then it
 * answers frames (core/code_wire.h) by calling the interpreter's host
 * interface (code/code_run.h) until the daemon closes the socket. A bug in
 * the interpreter can then crash this process, never reach the daemon, the
 * file system or the network. */
#ifndef CELLA_CORE_CODE_WORKER_H
#define CELLA_CORE_CODE_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* The socket's descriptor number in the worker (the seccomp rules name it). */
#define CODE_WORKER_FD 3
/* Runs one worker may hold at once (one resident paused run and one active
 * one is what the pool uses). */
#define CODE_WORKER_MAX_RUNS 64

/* argv: ["--as-bytes", N] (RLIMIT_AS; 0 or absent: none), ["--ppid", P]
 * (the daemon: the worker exits if it is not its parent). Returns the exit
 * status; under the filter it ends with _exit. */
int code_worker_main(int argc, char **argv);

/* The rules, compiled to BPF at build time (tools/seccomp_gen.c); needs
 * libseccomp: linked into the generator and the tests only. */
int code_seccomp_compile(uint8_t **bpf, size_t *len, cella_err *err);
/* The compiled program (generated code_seccomp_bpf.c). */
extern const uint8_t code_seccomp_bpf[];
extern const size_t code_seccomp_bpf_len;

#endif
