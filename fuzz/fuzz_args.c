/* libFuzzer target: everything a user types: `cella box` options (the input
 * split at NUL bytes into argv) and the value parsers behind them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/box_args.h"
#include "util/alloc.h"
#include "util/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    char *buf = cella_malloc(n + 1);
    memcpy(buf, d, n);
    buf[n] = '\0';
    char *argv[64];
    int argc = 0;
    for (char *p = buf; p < buf + n + 1 && argc < 63; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;

    box_opts o;
    if (box_args_parse(argc, argv, &o, NULL) == 0 && !o.help && (!o.argv || !o.argv[0]))
        abort();   /* success means a command was found */
    box_opts_free(&o);

    uint64_t v;
    uint32_t m;
    parse_u64(buf, 0, UINT64_MAX, &v, NULL);
    if (parse_duration_ms(buf, UINT64_MAX, &v, NULL) == 0 && strchr(buf, '-'))
        abort();   /* no negative durations */
    parse_size(buf, UINT64_MAX, &v, NULL);
    parse_cpus_milli(buf, UINT32_MAX, &m, NULL);
    env_assignment_valid(buf);
    cella_free(buf);
    return 0;
}
