/* The native dialect: cella's own routes (DESIGN §3), with iii-sandbox's
 * field names and semantics. */
#ifndef CELLA_API_NATIVE_H
#define CELLA_API_NATIVE_H

#include "http/server.h"

extern const http_route api_native_routes[];
/* The daemon's HTTP server, for /metrics (set once it is started). */
void api_native_set_server(http_server *s);

#endif
