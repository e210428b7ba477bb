/* The re module's private declarations: Pattern and Match objects over
 * PCRE2, shared by code_mod_re.c (compiling, the types, search/match) and
 * code_mod_re_sub.c (findall, finditer, sub, split). */
#ifndef CELLA_CODE_RE_H
#define CELLA_CODE_RE_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "code/code_lib.h"

/* Python's flag values. */
enum {
    RE_I = 2, RE_L = 4, RE_M = 8, RE_S = 16, RE_U = 32, RE_X = 64, RE_DEBUG = 128, RE_A = 256,
};

typedef struct re_pattern {
    code_obj ob;
    cv pattern;                  /* str or bytes, as given */
    int64_t flags;               /* as Pattern.flags reports them */
    bool is_bytes;
    uint32_t ngroups;
    pcre2_code *code;
    cv groupindex;               /* dict name -> group number */
} re_pattern;

typedef struct re_match {
    code_obj ob;
    cv string;
    cv re;                       /* the re_pattern */
    ssize_t pos, endpos;         /* in characters */
    ssize_t lastindex;           /* -1: None */
    uint32_t ngroups;
    /* per group (0..ngroups): char start, char end, byte start, byte end;
     * -1 for a group that did not take part */
    ssize_t span[];
} re_match;

/* A subject: its bytes and a cursor converting byte offsets to characters
 * (moving from its last position: matches go forward, so a pass over a
 * string converts in linear time). */
typedef struct re_subject {
    const char *s;
    size_t len;
    bool ascii;
    size_t b, c;                 /* the cursor: byte b is character c */
} re_subject;

/* Everything one call needs from PCRE2, allocated on the run's heap. */
typedef struct re_ctx {
    code_vm *vm;
    pcre2_general_context *g;
    pcre2_match_context *m;
    pcre2_match_data *md;
} re_ctx;

extern const code_type code_type_re_pattern, code_type_re_match;

int code_re_ctx_open(code_vm *vm, re_pattern *p, re_ctx *x);
void code_re_ctx_close(re_ctx *x);
/* 1 matched (x->md holds it), 0 no match, -1 error raised ("regular
 * expression too costly" when a limit is hit). */
int code_re_exec(re_ctx *x, re_pattern *p, re_subject *sub, size_t bstart, size_t bend, uint32_t opts);
/* The subject of a call, checked against the pattern's kind. */
int code_re_subject_of(code_vm *vm, re_pattern *p, cv string, re_subject *sub);
size_t code_re_char_of(re_subject *sub, size_t b);
size_t code_re_byte_of(re_subject *sub, size_t c);
/* pos/endpos arguments resolved to byte offsets (clamped as CPython does). */
int code_re_bounds(code_vm *vm, re_subject *sub, cv pos, cv endpos, size_t *bstart, size_t *bend,
              ssize_t *cpos, ssize_t *cend);
/* A Match object from x->md. */
cv code_re_match_new(re_ctx *x, re_pattern *p, cv string, re_subject *sub, ssize_t pos,
                ssize_t endpos);
/* The text of group g of m (None if unset, or dflt). */
cv code_re_match_group(code_vm *vm, re_match *m, uint32_t g, cv dflt);
/* A str or bytes slice of the subject by byte offsets. */
cv code_re_slice(code_vm *vm, bool is_bytes, const char *s, size_t b0, size_t b1);
/* The pattern argument of a module function: a Pattern (flags must be 0) or a
 * str/bytes compiled now. New reference. */
cv code_re_get_pattern(code_vm *vm, cv pattern, cv flags);
/* search (kind 0), match (1) or fullmatch (2) of a Pattern; their names. */
cv code_re_search(code_vm *vm, re_pattern *p, cv string, cv pos, cv endpos, int kind);
extern const char *const code_re_search_names[3];
/* The run's pattern cache (borrowed), emptied when clear. */
cv code_re_cache(code_vm *vm, bool clear);
/* The group number named by g (int or group name); -1 with IndexError. */
int code_re_group_index(code_vm *vm, re_match *m, cv g, uint32_t *out);

/* code_mod_re_sub.c */
cv code_re_findall(code_vm *vm, re_pattern *p, cv string, cv pos, cv endpos);
cv code_re_finditer(code_vm *vm, re_pattern *p, cv string, cv pos, cv endpos);
cv code_re_sub(code_vm *vm, re_pattern *p, cv repl, cv string, cv count, bool subn);
cv code_re_split(code_vm *vm, re_pattern *p, cv string, cv maxsplit);
cv code_re_expand(code_vm *vm, re_match *m, cv templ);
cv code_re_escape(code_vm *vm, cv *args, size_t nargs, cv kwnames);

#endif
