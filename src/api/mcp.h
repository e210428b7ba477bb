/* The MCP server (Model Context Protocol) at POST /mcp: the tools an agent
 * needs (run_code, create_sandbox, exec, read_file, write_file, list_files,
 * grep, glob, stop_sandbox) over the streamable HTTP transport. */
#ifndef CELLA_API_MCP_H
#define CELLA_API_MCP_H

#include "http/server.h"

extern const http_route api_mcp_routes[];

#endif
