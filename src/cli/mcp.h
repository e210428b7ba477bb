/* `cella mcp`: an MCP server on stdio that relays to the daemon's /mcp. */
#ifndef CELLA_CLI_MCP_H
#define CELLA_CLI_MCP_H

int cli_mcp_main(int argc, char **argv);

#endif
