/* A small streaming JSON writer into a cbuf, for the agent (which links no
 * JSON library) to answer file operations. Strings are written as valid
 * UTF-8 whatever bytes they hold: a byte that does not start a well-formed
 * sequence becomes U+FFFD, so a file name the kernel allows never breaks
 * the document. Commas are placed by the writer. */
#ifndef CELLA_UTIL_JSONW_H
#define CELLA_UTIL_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define JSONW_MAX_DEPTH 32

typedef struct jsonw {
    cbuf *out;
    int depth;
    bool first[JSONW_MAX_DEPTH];  /* nothing written yet at this level */
    bool after_key;
} jsonw;

void jw_init(jsonw *w, cbuf *out);
void jw_obj(jsonw *w);            /* { */
void jw_obj_end(jsonw *w);        /* } */
void jw_arr(jsonw *w);            /* [ */
void jw_arr_end(jsonw *w);        /* ] */
void jw_key(jsonw *w, const char *key);
void jw_strn(jsonw *w, const char *s, size_t n);
void jw_str(jsonw *w, const char *s);
void jw_u64(jsonw *w, uint64_t v);
void jw_i64(jsonw *w, int64_t v);
void jw_bool(jsonw *w, bool v);
void jw_null(jsonw *w);
/* Shorthands for one member. */
void jw_kstr(jsonw *w, const char *key, const char *s);
void jw_ku64(jsonw *w, const char *key, uint64_t v);
void jw_ki64(jsonw *w, const char *key, int64_t v);
void jw_kbool(jsonw *w, const char *key, bool v);
/* An octal mode as iii writes it: "0644". */
void jw_kmode(jsonw *w, const char *key, unsigned mode);

#endif
