#include "cli/opts.h"

#include <string.h>

int cli_need_value(int argc, char **argv, int *i, const char *opt, const char **val,
                   cella_err *err)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq && !strncmp(argv[*i], "--", 2)) {
        *val = eq + 1;
        return 0;
    }
    if (*i + 1 >= argc)
        return cella_err_set(err, 0, "option %s needs a value", opt);
    *val = argv[++*i];
    return 0;
}

bool cli_is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == '\0' || (arg[n] == '=' && name[1] == '-'));
}
