/* The iii dialect: POST /v1/trigger {function_id, payload}. */
#ifndef CELLA_API_III_H
#define CELLA_API_III_H

#include "http/server.h"

extern const http_route api_iii_routes[];

#endif
