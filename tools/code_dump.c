/* cella-code-dump: code mode's parser over files, for tests that compare it
 * with CPython (tests/unit/test_code_ast.py). For each FILE argument, one
 * line: "FILE<TAB>" then the AST dump (code_ast_dump, its newlines written
 * as "\N"), or "ERR <type> <line> <message>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_parse.h"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    *n = len;
    return buf;
}

int main(int argc, char **argv)
{
    size_t cap = 1 << 20;
    char *out = malloc(cap);
    if (!out)
        return 1;
    for (int i = 1; i < argc; i++) {
        size_t n;
        char *src = slurp(argv[i], &n);
        if (!src) {
            printf("%s\tERR OSError 0 cannot read\n", argv[i]);
            continue;
        }
        code_mem m;
        code_mem_init(&m, NULL, NULL, 256u << 20, 0);
        code_arena a;
        code_arena_init(&a, &m);
        code_error err = {0};
        code_module *mod;
        if (code_parse(src, n, NULL, &a, &mod, &err)) {
            printf("%s\tERR %s %d %s\n", argv[i], err.type, err.line, err.msg);
        } else {
            size_t need = code_ast_dump(mod, out, cap);
            if (need >= cap) {
                char *nb = realloc(out, need + 1);
                if (!nb)
                    return 1;
                out = nb;
                cap = need + 1;
                code_ast_dump(mod, out, cap);
            }
            printf("%s\t", argv[i]);
            for (const char *p = out; *p; p++) {
                if (*p == '\n')
                    fputs("\\N", stdout);
                else
                    putchar(*p);
            }
            putchar('\n');
        }
        code_arena_free(&a);
        free(src);
    }
    free(out);
    return 0;
}
