/* `cella code`: code mode's interpreter run locally, without a daemon. */
#ifndef CELLA_CLI_CODE_H
#define CELLA_CLI_CODE_H

#include <stdint.h>
#include <stdio.h>

#include "code/code_run.h"

/* `cella code`: argv starts after "code". Returns the process exit status:
 * 0 complete, 1 Python error, 2 usage or I/O error, 3 paused (--dump-to). */
int cli_code_main(int argc, char **argv);

#define CLI_CODE_OK 0
#define CLI_CODE_PYERR 1
#define CLI_CODE_USAGE 2
#define CLI_CODE_PAUSED 3

/* ---- the JSON lines (code_lines.c) ---- */

/* s[0..n) as a JSON string; bytes that are not UTF-8 become U+FFFD. */
void cli_code_json_str(FILE *f, const char *s, size_t n);

/* One answer line: {"call_id": N, "value": JSON} or {"call_id": N, "error":
 * {"type": "...", "message": "..."}}. The value is kept as its raw text (the
 * interpreter's codec reads it: big ints and tags survive). */
typedef struct cli_code_answer {
    code_result res;
    char *value, *type, *message;   /* owned; res points into them */
} cli_code_answer;
int cli_code_parse_answer(const char *line, size_t n, cli_code_answer *a, char *why,
                          size_t whylen);
void cli_code_answer_free(cli_code_answer *a);

#endif
