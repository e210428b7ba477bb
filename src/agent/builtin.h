/* Exit statuses of the agent's built-in file operations, so the host can
 * tell why one failed without parsing its message (stderr says it in words). */
#ifndef CELLA_AGENT_BUILTIN_H
#define CELLA_AGENT_BUILTIN_H

enum builtin_status {
    BUILTIN_OK = 0,
    BUILTIN_USAGE = 64,           /* malformed request */
    BUILTIN_NOT_FOUND = 65,       /* a parent directory is missing */
    BUILTIN_WRONG_TYPE = 66,      /* a directory where a file goes, or the reverse */
    BUILTIN_DENIED = 67,          /* permission denied */
    BUILTIN_IO = 68,              /* any other failure (disk full, ...) */
};

#endif
