/* A reply written straight to a connection's socket, for the one case
 * libmicrohttpd has no call for: an answer decided while the request body
 * is still arriving (an upload the sandbox refused half-way: over the
 * quota, a missing parent, a directory in the way).
 *
 * libmicrohttpd 0.9.75 (Debian 12's) queues a response only from the
 * first call of a request (headers in, no body read yet) or the last (the
 * whole body read): MHD_queue_response answers MHD_NO in between, even on
 * a suspended connection, and its header says so ("The response cannot be
 * queued when this callback is called to process the client upload
 * data"). Waiting for the end means reading, and dropping, everything the
 * client still sends, a 10 GiB body included. So the server writes the
 * reply itself, with Connection: close, waits until the peer has
 * acknowledged it, and returns MHD_NO, on which libmicrohttpd closes the
 * connection without reading the rest. The socket is at a message
 * boundary then: libmicrohttpd has written nothing of this request's
 * reply, and all of any "100 Continue". */
#include "http/early.h"

#include <errno.h>
#include <linux/sockios.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "util/fdio.h"

/* How long the reply may take to leave and be acknowledged. Closing a
 * socket with unread input sends a reset, which discards whatever of the
 * reply is still queued on this side, so the close waits for it. */
#define EARLY_SEND_MS 5000

static int64_t ms_left(int64_t end_ns)
{
    int64_t d = end_ns - clock_now_ns();
    return d > 0 ? d / 1000000 : 0;
}

static int send_all(int fd, const uint8_t *p, size_t n, int64_t end_ns)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int left = (int)ms_left(end_ns);
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            return -1;
    }
    return 0;
}

int http_early_reply(int fd, int status, const char *content_type, const char *body, size_t len,
                     const char *const *headers)
{
    if (fd < 0)
        return -1;
    const char *reason = MHD_get_reason_phrase_for((unsigned)status);
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    char head[2048];
    int n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\nCache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\n", status,
                     reason && *reason ? reason : "Unknown", date, content_type, len);
    for (size_t i = 0; headers && headers[i] && headers[i + 1] && n > 0 &&
                       (size_t)n < sizeof(head); i += 2)
        n += snprintf(head + n, sizeof(head) - (size_t)n, "%s: %s\r\n", headers[i], headers[i + 1]);
    if (n > 0 && (size_t)n < sizeof(head))
        n += snprintf(head + n, sizeof(head) - (size_t)n, "\r\n");
    if (n <= 0 || (size_t)n >= sizeof(head))
        return -1;                /* never: the headers are the server's own, and short */
    int64_t end = clock_now_ns() + (int64_t)EARLY_SEND_MS * 1000000;
    int rc = send_all(fd, (const uint8_t *)head, (size_t)n, end);
    if (rc == 0)
        rc = send_all(fd, (const uint8_t *)body, len, end);
    if (rc < 0)
        return -1;
    /* FIN after the reply; then wait for the peer to acknowledge it. */
    shutdown(fd, SHUT_WR);
    for (int queued = 1; ms_left(end) > 0;) {
        if (ioctl(fd, SIOCOUTQ, &queued) < 0 || queued == 0)
            break;
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}
