/* Flyte-style typed one-shot runs (docs/api.md, "Typed runs"): inputs of a
 * few types staged as files at /var/inputs/<name>, declared outputs read
 * back from /var/outputs/<name>, three modes (auto-IO Python, verbatim
 * code, command), retries in fresh sandboxes, and a result cache in the
 * store keyed by a SHA-256 of everything that decides the result.
 *
 * Every value travels as its canonical text (file inputs and outputs as
 * their bytes): what is staged, hashed for the cache key, cached, and what
 * the API renders. typed_parse turns any accepted spelling into it. */
#ifndef CELLA_CORE_TYPED_H
#define CELLA_CORE_TYPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>              /* core.h's ssize_t */

#include "core/core.h"
#include "util/buf.h"

#define TYPED_MAX_VARS 64              /* inputs; and, apart, outputs */
#define TYPED_NAME_MAX 255             /* bytes of a name: a file name's most (NAME_MAX) */
#define TYPED_MAX_RETRIES 10
#define TYPED_MAX_ARGV 1024            /* command + arguments */
#define TYPED_SCALAR_MAX 4096          /* the text of an int, float, bool, datetime, timedelta */
#define TYPED_OUTPUT_MAX (8u << 20)    /* one str or file output */
#define TYPED_OUTPUTS_MAX (16u << 20)  /* every output of a run together */

typedef enum typed_type {
    TT_INT = 1,
    TT_FLOAT,
    TT_STR,
    TT_BOOL,
    TT_DATETIME,
    TT_TIMEDELTA,
    TT_FILE,
    TT_DIR,                       /* a directory, carried as a tar archive of its contents */
} typed_type;
#define TT_LAST TT_DIR

/* "int", "float", ...; NULL for a value out of range. */
const char *typed_type_name(typed_type t);
/* 0 and *out for a known name, else -1. */
int typed_type_parse(const char *s, typed_type *out);
/* Names are file names under /var/inputs and /var/outputs (Flyte's own
 * examples name inputs "solution.py"): 1 to TYPED_NAME_MAX bytes, no '/',
 * not "." or "..". (NUL cannot be in a C string, nor in a JSON key
 * jansson parses.) */
bool typed_name_ok(const char *s);
/* [A-Za-z_][A-Za-z0-9_]*: in auto-IO mode such a name is also a Python
 * variable; other names are only files there. */
bool typed_name_is_var(const char *s);

/* Text (a request's, or a file a program wrote) as the canonical text of a
 * value of type t, appended to out. -1 with a one-line reason in why when
 * it is not one. Accepted spellings, canonical form first:
 *   int        decimal int64, surrounding whitespace ignored: "-42"
 *   float      a finite double, shortest text that reads back the same,
 *              with ".0" when whole: "0.1", "3.0", "1e+300"
 *   str        any valid UTF-8, kept byte for byte
 *   bool       "true"/"false"; on reading, "false", "0" and "" (any case,
 *              whitespace ignored) are false, anything else true (Flyte's rule)
 *   datetime   ISO 8601 as Python's isoformat() writes it:
 *              "2024-01-01T12:00:00", ".ffffff" when not whole, "+HH:MM"
 *              when it has an offset ("Z" reads as "+00:00"); date only,
 *              ' ' for 'T', 1-9 fraction digits, ',' for '.' also read
 *   timedelta  seconds, up to microseconds: "86400", "-1.5"; also read as
 *              ISO 8601 durations "P1DT2H3M4.5S" (weeks, days, hours,
 *              minutes, seconds: years and months have no fixed length)
 *              and Python's str(): "1 day, 2:03:04.500000"
 *   file       any bytes, kept
 *   dir        a tar archive (util/tar.h's format) of the directory's
 *              contents, kept as bytes: the agent's tar-extract checks it
 *              when it is staged, and tar-create makes it when collected */
int typed_parse(typed_type t, const uint8_t *p, size_t n, cbuf *out, char *why, size_t why_n);
/* The canonical texts of a double (finite) and of a timedelta in
 * microseconds; buf holds at least 40 bytes. */
void typed_float_text(double v, char *buf, size_t n);
void typed_timedelta_text(int64_t us, char *buf, size_t n);
/* Reads canonical (or any accepted) timedelta text as microseconds. */
int typed_timedelta_us(const uint8_t *p, size_t n, int64_t *us);

typedef struct typed_value {
    const char *name;
    typed_type type;
    const uint8_t *data;          /* canonical text, or a file's bytes */
    size_t len;
} typed_value;

typedef struct typed_decl {
    const char *name;
    typed_type type;
} typed_decl;

typedef enum typed_mode {
    TM_AUTO_IO = 1,               /* Python: inputs as variables, outputs from variables */
    TM_VERBATIM,                  /* code as written: it reads and writes the files */
    TM_COMMAND,                   /* argv: command + arguments */
} typed_mode;

typedef enum typed_cache {
    TC_AUTO = 0,                  /* use, and fill after a success */
    TC_OVERRIDE,                  /* run, and fill after a success */
    TC_DISABLE,                   /* neither */
} typed_cache;

typedef struct core_typed_req {
    core_run_req run;             /* image, lang, code, files, env, stdin, timeout, keep_sandbox;
                                   * command mode: lang and code NULL */
    typed_mode mode;
    char *const *argv;            /* command mode: command then arguments */
    const typed_value *inputs;
    size_t n_inputs;
    const typed_decl *outputs;
    size_t n_outputs;
    unsigned retries;             /* more attempts after a failed one, at most TYPED_MAX_RETRIES */
    typed_cache cache;
} core_typed_req;

/* A collected output (owning its bytes). */
typedef struct typed_out {
    char *name;
    typed_type type;
    cbuf data;                    /* canonical text or bytes */
} typed_out;

typedef struct core_typed_result {
    core_exec_result exec;        /* the last attempt's (or the cached run's) */
    typed_out *outputs;           /* in declaration order; only those collected */
    size_t n_outputs;
    unsigned attempts;            /* attempts run now: 0 when served from the cache */
    bool cached;
    bool has_outputs_error;       /* a declared output missing or not of its type */
    char outputs_error[512];
    char sandbox_id[40];          /* keep_sandbox: the last attempt's sandbox, else "" */
} core_typed_result;

/* Runs it: the cache first (cache auto), else up to 1 + retries attempts,
 * each in a fresh sandbox: create, write files, stage inputs, write the
 * code (and the auto-IO wrapper), exec, write /var/outputs/exit_code,
 * collect the outputs, stop. An attempt that exits non-zero or times out
 * is retried. Output problems (missing, wrong type, too large) are not
 * errors of the call: they set outputs_error, and the run is not a
 * success. Errors (-1, e) are the steps' own, as core_run's. */
int core_typed_run(core *c, const char *tenant, const core_typed_req *r, int client_fd,
                   core_typed_result *res, core_error *e);
void core_typed_result_init(core_typed_result *r);
void core_typed_result_free(core_typed_result *r);
/* The exit code, no timeout, no output problem. */
bool core_typed_success(const core_typed_result *r);

/* ---- pure parts (core/typed_codec.c), unit-tested and fuzzed --------------- */

/* SHA-256 over a canonical encoding of the tenant, image, mode, the
 * interpreter (NULL in command mode), code, argv, files, env, stdin, the
 * inputs (sorted by name) and the declared outputs (sorted by name). Not
 * in it: timeout, retries, keep_sandbox, cache. */
void typed_cache_key(const char *tenant, const core_typed_req *r, const char *interp,
                     uint8_t key[32]);
/* A successful result as a cache entry, and back. decode checks everything
 * (a damaged database is refused, never trusted): -1 when it is not one. */
void typed_result_encode(const core_typed_result *r, cbuf *out);
int typed_result_decode(const uint8_t *p, size_t n, core_typed_result *r);
/* The auto-IO wrapper: Python that reads the inputs whose names are
 * variables (typed_name_is_var) into a namespace, runs code_path in it,
 * and writes the declared non-file outputs of such names the code set.
 * Names must be typed_name_ok; any byte of them is escaped. */
void typed_wrapper(const core_typed_req *r, const char *code_path, cbuf *out);

#endif
