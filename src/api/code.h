/* Code mode's routes (POST /v1/code/run, POST /v1/code/resume), on the
 * worker pool of core/code_pool.h. */
#ifndef CELLA_API_CODE_H
#define CELLA_API_CODE_H

#include "http/server.h"

extern const http_route api_code_routes[];

#endif
