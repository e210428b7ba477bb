/* Built-in operations, run in an exec's child: the sandbox user's rights,
 * its rlimits, its mount namespace. The daemon never resolves a sandbox
 * path on the host (DESIGN rule 3); it asks the agent, and the agent does
 * it as the sandbox user would.
 *
 *   fs OP key=value...        the file API's operations (fs.c, fs_int.h)
 *
 * And, run by exec.c rather than here because it ends in an exec:
 *   write-exec PATH MODE CONTENT PROG ARG...
 *                             CONTENT -> PATH as fs write does (parents
 *                             made), then PROG ARG... is exec'd as a
 *                             command is: a one-shot run's code file and
 *                             its interpreter in one round trip. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent_int.h"
#include "agent/builtin.h"

int agent_builtin_main(char *const argv[])
{
    if (argv[0] && !strcmp(argv[0], "fs"))
        return agent_fs_main(argv + 1);
    fprintf(stderr, "unknown built-in operation '%.64s'\n", argv[0] ? argv[0] : "");
    return BUILTIN_USAGE;
}
