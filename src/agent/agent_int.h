/* The agent's internals, shared by agent.c (the loop), setup.c and exec.c. */
#ifndef CELLA_AGENT_AGENT_INT_H
#define CELLA_AGENT_AGENT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "agent/proto.h"
#include "util/buf.h"
#include "util/err.h"

#define AGENT_SOCK_FD 3
#define EXEC_REPORT 3          /* index of the start-report pipe in agent_exec.fd */
#define AGENT_MAX_EXECS 64
/* Past this much queued for the parent, stop reading commands' output, so a
 * slow parent slows the commands instead of growing the agent. */
#define AGENT_OUT_HIGH_WATER (1u << 20)
/* After a command exits, how long to wait for background processes that still
 * hold its output pipes before answering anyway. */
#define AGENT_DRAIN_GRACE_MS 100
/* How long a cancelled file operation (SIGTERM) has to undo what it
 * started before it is killed, and how often the SIGTERM is repeated. */
#define AGENT_CANCEL_GRACE_MS 2000
#define AGENT_CANCEL_REPEAT_MS 50
/* Stdin the parent may have in flight for one command (it keeps to its window). */
#define AGENT_STDIN_MAX (1u << 20)

typedef struct agent_exec {
    uint32_t id;
    pid_t pid;
    /* stdin (write end), stdout, stderr (read ends), and the start report:
     * a close-on-exec pipe whose EOF means the exec happened. -1: closed. */
    int fd[4];
    uint64_t cap[3];          /* bytes forwarded at most, per stream (index 1, 2) */
    uint64_t kept[3];         /* bytes forwarded */
    uint64_t total[3];        /* bytes produced */
    bool windowed;            /* EXEC_OUTPUT_WINDOW */
    uint64_t acked;           /* stdout bytes the parent has consumed */
    cbuf stdin_buf;
    bool stdin_eof;           /* the parent has sent all of stdin */
    bool stdin_closed;        /* the command closed its stdin */
    char *cmd;                /* argv[0] and the workdir, for start-failure messages */
    char *cwd;
    int64_t start_ns;
    int64_t deadline_ns;      /* 0: none */
    int64_t drain_deadline_ns;
    int64_t last_tick_ns;
    bool timed_out;
    bool reaped;
    int status;
    struct rusage ru;
    int64_t end_ns;
    bool builtin;             /* a file operation (EXEC_BUILTIN), cancelled, not killed */
    int64_t cancel_ns;        /* when it was first told to cancel; 0: never */
    int64_t cancel_sent_ns;   /* the last SIGTERM */
} agent_exec;

typedef struct agent {
    int sock;
    cbuf in, out;
    bool parent_gone;
    bool root_mapped;
    uint32_t uid, gid;
    uint64_t rlimit_fsize, rlimit_nofile;
    int devnull;
    int sigfd;
    agent_exec *execs[AGENT_MAX_EXECS];
} agent;

/* setup.c */
/* fds may be replaced (closed and re-opened) on the way. */
int agent_setup(agent *a, const proto_setup *s, int *fds, size_t nfds, cella_err *err);

/* agent.c */
void agent_send(agent *a, uint16_t type, uint16_t flags, uint32_t id, const void *p, size_t n);
void agent_send_error(agent *a, uint32_t id, uint32_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* exec.c */
void agent_exec_start(agent *a, uint32_t id, const uint8_t *payload, size_t n);
void agent_exec_stdin(agent *a, uint32_t id, uint16_t flags, const uint8_t *p, size_t n);
void agent_exec_signal(agent *a, uint32_t id, const uint8_t *p, size_t n);
void agent_exec_output_ack(agent *a, uint32_t id, const uint8_t *p, size_t n);
/* Windowed stdout with the whole window in flight: do not read more. */
bool agent_exec_window_full(const agent_exec *e);
void agent_exec_pump(agent *a, agent_exec *e, int stream);
/* The start report is readable: the command exec'd (EOF) or could not start. */
void agent_exec_started(agent *a, int slot);
void agent_exec_write_stdin(agent *a, agent_exec *e);
void agent_reap(agent *a);
/* The parent is gone: ends every command and file operation (the latter
 * cancelled, with a bounded grace) and reaps them. Call before exiting. */
void agent_exec_parent_gone(agent *a);
/* Timeouts and completion of the exec in a slot (which it may free); returns
 * the ms until it next needs a look (-1: none). */
int agent_exec_tick(agent *a, int slot, int64_t now);
/* True when the outgoing queue is full enough to stop reading commands' output. */
bool agent_throttled(const agent *a);
agent_exec *agent_exec_find(agent *a, uint32_t id);

/* builtin.c: runs a built-in operation in an exec's child (already the
 * sandbox user, in its cwd, stdio in place). Returns the exit status. */
int agent_builtin_main(char *const argv[]);
/* fs.c: writes content to path (parents made) atomically, as fs write does.
 * Returns 0 or the errno of the failure. */
int agent_builtin_write(const char *path, const char *mode, const char *content);
/* fs.c: `fs OP key=value...`, the file API's operations (fs_int.h). */
int agent_fs_main(char *const argv[]);

#endif
