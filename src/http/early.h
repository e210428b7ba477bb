/* A reply written straight to a connection's socket while the request's
 * body is still arriving (early.c says why libmicrohttpd cannot). */
#ifndef CELLA_HTTP_EARLY_H
#define CELLA_HTTP_EARLY_H

#include <stddef.h>

/* Writes "HTTP/1.1 status" with the body, Connection: close and headers
 * ({name, value, ..., NULL}), half-closes the socket and waits (bounded)
 * until the peer has acknowledged every byte. 0, or -1 when the reply
 * could not be sent (the client is gone). The caller then has the
 * connection closed without reading the rest of the body. */
int http_early_reply(int fd, int status, const char *content_type, const char *body, size_t len,
                     const char *const *headers);

#endif
