/* Option scanning shared by the command lines (`cella box`, the client
 * subcommands): `--opt value` and `--opt=value`. */
#ifndef CELLA_CLI_OPTS_H
#define CELLA_CLI_OPTS_H

#include <stdbool.h>

#include "util/err.h"

/* The value of the option at argv[*i]: after its '=' (long options), or the
 * next word, which *i then moves past. opt names it in the error. */
int cli_need_value(int argc, char **argv, int *i, const char *opt, const char **val,
                   cella_err *err);
/* True when arg is the option `name`, alone or (long options) as name=value. */
bool cli_is_opt(const char *arg, const char *name);

#endif
