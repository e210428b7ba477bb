/* The error catalogue: every failure a client can see is one of these
 * S-codes (iii-sandbox's, plus cella's own S005/S006/S301), with a type, a
 * retryable flag, a default HTTP status and a one-line note on what to do.
 * Core fills a core_error; each dialect renders it its own way. */
#ifndef CELLA_CORE_ERRORS_H
#define CELLA_CORE_ERRORS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

typedef enum core_code {
    S_OK = 0,
    S001 = 1,      /* invalid request */
    S002 = 2,      /* sandbox not found */
    S003 = 3,      /* exec concurrency cap */
    S004 = 4,      /* sandbox already stopped */
    S005 = 5,      /* cella: missing or unknown token */
    S006 = 6,      /* cella: admin only */
    S007 = 7,      /* cella: a web page's request (Origin, Host) refused */
    S100 = 100,    /* image not in catalog */
    S101 = 101,    /* image files missing */
    S102 = 102,    /* image install failed */
    S200 = 200,    /* exec timed out (iii dialect) */
    S210 = 210, S211, S212, S213, S214, S215, S216, S217, S218, S219,
    S300 = 300,    /* sandbox start failed */
    S301 = 301,    /* cella: shutting down / not ready */
    S302 = 302,    /* cella: internal error in the daemon */
    S400 = 400,    /* resource limit exceeded */
    S500 = 500,    /* cella: code run not found */
    S501 = 501,    /* cella: code run busy (being resumed) */
    S502 = 502,    /* cella: code run lost */
} core_code;

#define CORE_FIX_MAX 4

typedef struct core_fix_field {
    const char *key;              /* static string */
    enum { FIX_BOOL, FIX_STR } kind;
    bool b;
    char s[96];
} core_fix_field;

typedef struct core_error {
    core_code code;
    int http_status;              /* 0: the code's default */
    char message[CELLA_ERR_MAX];
    const char *fix_note;         /* static; NULL: the code's default */
    core_fix_field fix[CORE_FIX_MAX];   /* a payload to merge into the request and resend */
    int n_fix;
} core_error;

typedef struct core_code_info {
    core_code code;
    const char *name;             /* "S001" */
    const char *type;             /* validation, config, internal, transient, execution, filesystem, platform */
    bool retryable;
    int http_status;
    const char *title;            /* docs heading */
    const char *fix_note;
} core_code_info;

const core_code_info *core_code_lookup(core_code c);
/* Sets e (code and a formatted message); returns -1. */
int core_fail(core_error *e, core_code c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An internal failure (cella_err) as the given code, message prefixed. */
int core_fail_err(core_error *e, core_code c, const cella_err *err, const char *prefix);
void core_fix_bool(core_error *e, const char *key, bool v);
void core_fix_str(core_error *e, const char *key, const char *v);
int core_http_status(const core_error *e);
/* Environment entries must be NAME=VALUE with NAME [A-Za-z_][A-Za-z0-9_]*:
 * S001 "<key> contains invalid variable name(s): [...]" as iii words it
 * (at most eight names listed). */
int core_env_check(const char *key, char *const *env, core_error *e);
int core_env_bad_names(core_error *e, const char *key, char *const *bad, size_t nb);
/* The docs anchor: "<base>#s001". */
#define CORE_DOCS_BASE "https://github.com/cella-sandbox/cella/blob/main/docs/errors.md"

#endif
