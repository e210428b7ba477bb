/* libFuzzer target: the daemon's configuration readers (src/core/config.c):
 * the YAML config file and the tokens file. Both are read at start-up from
 * files an operator may have copied from anywhere. Checked beyond "no crash,
 * no leak": every token a successful parse returns is found by tokens_find
 * (and is that very entry), and a string that is no token is not found. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    cella_err e;

    cella_config c;
    config_init(&c);
    if (config_load_yaml(&c, (const char *)d, n, "fuzz", &e) == 0)
        config_validate(&c, &e);
    config_free(&c);

    cfg_tokens t;
    if (tokens_parse(&t, (const char *)d, n, "fuzz", &e) == 0) {
        for (size_t i = 0; i < t.n; i++) {
            if (!t.v[i].token || !t.v[i].tenant || tokens_find(&t, t.v[i].token) != &t.v[i])
                abort();
        }
        /* '!' is outside the token alphabet, so this is never a token. */
        if (tokens_find(&t, "!not-a-token-at-all!") != NULL)
            abort();
        tokens_free(&t);
    }
    return 0;
}
