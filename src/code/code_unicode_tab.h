/* Code mode's Unicode tables (generated into code_unicode_tab.c by
 * scripts/gen_code_unicode.py from CPython 3.11 itself) and their lookups
 * (code_unicode.c). Static and read-only: no locale, no initialisation. */
#ifndef CELLA_CODE_UNICODE_TAB_H
#define CELLA_CODE_UNICODE_TAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum code_uprop {
    CODE_UP_PRINTABLE, CODE_UP_ALPHA, CODE_UP_DECIMAL, CODE_UP_DIGIT, CODE_UP_NUMERIC,
    CODE_UP_SPACE, CODE_UP_LOWER, CODE_UP_UPPER, CODE_UP_TITLE, CODE_UP_CASED,
    CODE_UP_CASE_IGNORABLE, CODE_UP_XID_START, CODE_UP_XID_CONTINUE, CODE_UP_ALNUM,
    CODE_UP__COUNT,
};
enum code_ucase { CODE_UC_LOWER, CODE_UC_UPPER, CODE_UC_TITLE, CODE_UC_FOLD, CODE_UC__COUNT };

typedef struct code_uprop_table { const uint32_t (*r)[2]; size_t n; } code_uprop_table;
/* Code points lo..hi step stride map to cp + delta. */
typedef struct code_ucase_run { uint32_t lo, hi; uint8_t stride; int32_t delta; } code_ucase_run;
/* A code point whose mapping is several (code_ucase_specials[ix], UTF-8). */
typedef struct code_ucase_multi { uint32_t cp, ix; } code_ucase_multi;
typedef struct code_ucase_table {
    const code_ucase_run *runs;
    size_t nruns;
    const code_ucase_multi *multi;
    size_t nmulti;
} code_ucase_table;

extern const code_uprop_table code_uprop_tables[CODE_UP__COUNT];
extern const code_ucase_table code_ucase_tables[CODE_UC__COUNT];
extern const char *const *const code_ucase_specials;

/* cp has the property (CPython's str.isX() for that one character). */
bool code_uprop(uint32_t cp, enum code_uprop p);
/* Writes cp's full case mapping as UTF-8 into out (at least 16 bytes);
 * returns its length. */
size_t code_ucase(uint32_t cp, enum code_ucase m, char *out);
/* The value of a decimal digit (any script), or -1. */
int code_udecimal(uint32_t cp);

#endif
