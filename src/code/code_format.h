/* Code mode's format-spec mini-language, shared by format() (code_format.c),
 * str.format (code_strformat.c) and printf-style % (code_printf.c). */
#ifndef CELLA_CODE_FORMAT_H
#define CELLA_CODE_FORMAT_H

#include "code/code_strutil.h"

/* [[fill]align][sign][z][#][0][width][grouping][.precision][type] */
typedef struct code_fspec {
    const char *fill;            /* UTF-8 of the fill character (not NUL-ended) */
    size_t flen;
    char align;                  /* '<' '>' '^' '=' */
    char sign;                   /* 0, '+', '-', ' ' */
    bool z, alt;
    char group;                  /* 0, ',' or '_' */
    ssize_t width, prec;         /* -1: not given */
    uint32_t type;               /* 0: not given */
} code_fspec;

/* Parses spec; default_align is '<' for str, '>' for numbers;
 * default_type 's' for str, 'd' for int, 0 for float; tname names the
 * value's type in messages. */
int code_fspec_parse(code_vm *vm, const char *s, size_t n, char default_align,
                     uint32_t default_type, const char *tname, code_fspec *f);
/* ValueError "Unknown format code 'x' for object of type 'str'". */
int code_fspec_unknown(code_vm *vm, uint32_t type, const char *tname);
/* Appends a formatted number: sign, prefix ("0x"), integer digits (grouped
 * every `every` by f->group), the rest (fraction, exponent, '%'), padded by
 * f's width, fill and alignment ('=' and 0-fill pad after the sign). */
int code_fmt_number(code_sb *out, const code_fspec *f, bool neg, const char *prefix,
                    const char *digits, size_t nd, const char *rest, size_t nrest, size_t every);
int code_fmt_str(code_sb *out, const code_fspec *f, const char *s, size_t n, size_t nchars);
int code_fmt_int(code_sb *out, const code_fspec *f, cv v, const char *tname);
int code_fmt_float(code_sb *out, const code_fspec *f, double d);

#endif
