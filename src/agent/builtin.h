/* Exit statuses of the agent's built-in file operations, so the host can
 * tell why one failed without parsing its message. The message itself is
 * the first line of stderr, written for a person ("file not found: /x"),
 * and becomes the error's message as it is. */
#ifndef CELLA_AGENT_BUILTIN_H
#define CELLA_AGENT_BUILTIN_H

enum builtin_status {
    BUILTIN_OK = 0,
    BUILTIN_USAGE = 64,           /* malformed request (S210) */
    BUILTIN_NOT_FOUND = 65,       /* the path does not exist (S211) */
    BUILTIN_WRONG_TYPE = 66,      /* a directory where a file goes, or the reverse (S212) */
    BUILTIN_DENIED = 67,          /* permission denied (S215) */
    BUILTIN_IO = 68,              /* any other failure: disk full, ... (S216) */
    BUILTIN_EXISTS = 69,          /* the path exists already (S213) */
    BUILTIN_NOT_EMPTY = 70,       /* a directory with entries (S214) */
    BUILTIN_BAD_REGEX = 71,       /* pattern refused or too costly (S217) */
    BUILTIN_UNSUPPORTED = 72,     /* operation unsupported (S219) */
    BUILTIN_QUOTA = 73,           /* the workspace quota would be exceeded (S400) */
    BUILTIN_PARENT_MISSING = 74,  /* a write's parent is missing (S211, fix parents:true) */
    BUILTIN_TIMED_OUT = 75,       /* the caller's deadline_ms passed first (S200) */
};

#endif
