/* cella: one binary. `cella serve` is the daemon, the other
 * subcommands are its command-line tools. The agent that runs as PID 1
 * inside every sandbox is embedded (agent/main.c). */
#include <stdio.h>
#include <string.h>

#include "cli/box_cmd.h"
#include "cli/client.h"
#include "cli/code.h"
#include "cli/mcp.h"
#include "cli/serve.h"
#include "cli/transfer.h"
#include "core/code_worker.h"

static const char usage[] =
    "Usage: cella COMMAND [ARGS...]\n"
    "\n"
    "cella runs untrusted code in Linux sandboxes: namespaces, seccomp, cgroups.\n"
    "\n"
    "Commands (each has --help):\n"
    "  box        run one command in a fresh sandbox (see 'cella box --help')\n"
    "  serve      the sandbox daemon and its HTTP API (see 'cella serve --help')\n"
    "  run        run a command in a fresh sandbox of the daemon's, then stop it\n"
    "  create     create a sandbox; prints its id\n"
    "  exec       run a command in a sandbox\n"
    "  ls         list sandboxes\n"
    "  stop       stop sandboxes\n"
    "  upload     copy a file (or a tar of a directory) into a sandbox\n"
    "  download   copy a file (or a directory, as a tar) out of a sandbox\n"
    "  fs         one file operation in a sandbox: ls, stat, mkdir, rm, mv, grep, ...\n"
    "  catalog    list the images sandboxes can be made from\n"
    "  mcp        an MCP server on stdio for agents, relayed to the daemon\n"
    "  code       run restricted Python locally, host calls over stdin/stdout\n"
    "  version    print the version\n"
    "  help       show this help\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    /* Hidden: a code-mode worker, started by the daemon's pool. */
    if (!strcmp(cmd, "code-worker"))
        return code_worker_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "box"))
        return cli_box_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("cella %s\n", CELLA_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "serve"))
        return cli_serve_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "code"))
        return cli_code_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "mcp"))
        return cli_mcp_main(argc - 2, argv + 2);
    if (cli_client_is_command(cmd))
        return cli_client_main(cmd, argc - 2, argv + 2);
    if (cli_transfer_is_command(cmd))
        return cli_transfer_main(cmd, argc - 2, argv + 2);
    fprintf(stderr, "cella: unknown command '%s'\n\n%s", cmd, usage);
    return 2;
}
