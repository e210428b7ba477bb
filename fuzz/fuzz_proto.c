/* libFuzzer target: the agent protocol's decoders and frame splitter, which
 * read bytes from the other side of a sandbox boundary. Invariant checked
 * beyond "no crash": whatever decodes re-encodes to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

#define ROUNDTRIP(type, get, put, release)                                             \
    do {                                                                               \
        type x;                                                                        \
        if (get(d, n, &x, &e) == 0) {                                                  \
            cbuf b;                                                                    \
            cbuf_init(&b);                                                             \
            put(&b, &x);                                                               \
            if (cbuf_avail(&b) != n || memcmp(cbuf_head(&b), d, n) != 0)               \
                abort();                                                               \
            cbuf_free(&b);                                                             \
            release(&x);                                                               \
        }                                                                              \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t which = data[0] % 5;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    cella_err e;
    switch (which) {
    case 0: {
        /* setup copies op data and may normalise nothing: round trip too */
        ROUNDTRIP(proto_setup, proto_get_setup, proto_put_setup, proto_setup_free);
        break;
    }
    case 1:
        ROUNDTRIP(proto_exec, proto_get_exec, proto_put_exec, proto_exec_free);
        break;
    case 2:
        ROUNDTRIP(proto_exit, proto_get_exit, proto_put_exit, proto_exit_free);
        break;
    case 3:
        ROUNDTRIP(proto_error, proto_get_error, proto_put_error, proto_error_free);
        break;
    default: {
        cbuf b;
        cbuf_init(&b);
        cbuf_append(&b, d, n);
        proto_hdr h;
        const uint8_t *p;
        while (proto_peek_frame(&b, &h, &p, &e) == 1)
            cbuf_consume(&b, PROTO_HDR_SIZE + h.len);
        cbuf_free(&b);
    }
    }
    return 0;
}
