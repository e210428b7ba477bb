/* Code mode's numbers, private to code_int.c, code_bigint.c, code_float.c and
 * code_mod_math.c: limb arithmetic on magnitudes and the int helpers the
 * float and math parts share. */
#ifndef CELLA_CODE_NUM_H
#define CELLA_CODE_NUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/code_val.h"
#include "code/code_vm.h"

/* CPython's limit on decimal (non power of two base) int<->str conversion. */
#define CODE_INT_MAX_STR_DIGITS 4300
/* Numeric hashes are taken modulo this prime, as CPython's. */
#define CODE_HASH_MODULUS (((uint64_t)1 << 61) - 1)
#define CODE_HASH_INF 314159

/* ---- magnitudes (code_bigint.c): little-endian arrays of 32-bit limbs. ----
 * Lengths are limb counts; results are not normalised unless said. */

/* n without its leading zero limbs. */
size_t code_mag_norm(const uint32_t *a, size_t n);
int code_mag_cmp(const uint32_t *a, size_t na, const uint32_t *b, size_t nb);
/* r = a + b, na >= nb; r has na + 1 limbs (written). */
void code_mag_add(uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b, size_t nb);
/* r = a - b, a >= b, na >= nb; r has na limbs. */
void code_mag_sub(uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b, size_t nb);
/* r = a * b (na + nb limbs, r distinct from a and b): schoolbook, Karatsuba
 * for large operands (its scratch from the run's heap: -1 + MemoryError). */
int code_mag_mul(code_vm *vm, uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b,
                 size_t nb);
/* a = a * m + add in place (n limbs); returns the carry out. */
uint32_t code_mag_muladd1(uint32_t *a, size_t n, uint32_t m, uint32_t add);
/* q = a / d (n limbs, q may be a), returns the remainder. */
uint32_t code_mag_divrem1(uint32_t *q, const uint32_t *a, size_t n, uint32_t d);
/* Knuth's algorithm D: q (na - nb + 1 limbs, may be NULL) and r (nb limbs,
 * may be NULL) of a / b, nb >= 2 and b normalised, na >= nb. -1 + MemoryError. */
int code_mag_divmod(code_vm *vm, uint32_t *q, uint32_t *r, const uint32_t *a, size_t na,
                    const uint32_t *b, size_t nb);
/* Bits in a (normalised, n > 0). */
uint64_t code_mag_bits(const uint32_t *a, size_t n);

/* ---- int values (code_int.c) ---------------------------------------------- */

/* A read-only view of an int (small, big or bool) as sign and magnitude; d
 * may point into the view itself, so a view is not copied. */
typedef struct code_intview {
    int sign;                    /* -1, 0, 1 */
    size_t n;                    /* 0 for zero */
    const uint32_t *d;
    uint32_t buf[2];
} code_intview;

void code_intview_of(code_intview *v, cv x);
/* An int (or bool) value: small tagged, bigint, True/False. */
static inline bool code_is_int(cv v)
{
    return cv_is_small(v) || cv_obj(v)->type == &code_type_int ||
           cv_obj(v)->type == &code_type_bool;
}
static inline bool code_is_float(cv v)
{
    return !cv_is_small(v) && cv_obj(v)->type == &code_type_float;
}
static inline double code_float_val(cv v) { return ((code_float *)cv_obj(v))->v; }

/* A bigint with room for n limbs (n >= 1), sign 1; CV_NULL + MemoryError,
 * checked against the run's limit first. */
code_bigint *code_bigint_alloc(code_vm *vm, size_t n);
/* Trims leading zero limbs and turns it into a small int when it fits:
 * consumes b, returns the value. */
cv code_bigint_finish(code_vm *vm, code_bigint *b);
/* An int from a sign and magnitude (copied). */
cv code_int_from_mag(code_vm *vm, int sign, const uint32_t *d, size_t n);
/* MemoryError unless a result of about `limbs` limbs may fit the run's
 * remaining memory: called before work whose result size is known. */
int code_int_check_size(code_vm *vm, uint64_t limbs);
/* Exact floor of a finite double as an int. */
cv code_int_from_double(code_vm *vm, double d);
/* Python's hash of an int (as uint64 of the signed value). */
uint64_t code_int_hash(cv v);
/* Compares an int with a double exactly: -1, 0, 1, or 2 for nan. */
int code_int_cmp_double(cv i, double d);
int code_int_cmp(cv a, cv b);
uint64_t code_int_bit_length(cv v);
/* int op int for the arithmetic binops; CODE_NOTIMPL never. */
cv code_int_binop(code_vm *vm, int op, cv a, cv b);
cv code_int_pow(code_vm *vm, cv a, cv b);
cv code_int_floordiv(code_vm *vm, cv a, cv b, cv *rem);
cv code_int_neg(code_vm *vm, cv a);
/* int(str/bytes, base) parsing, CPython's rules (whitespace, sign, prefix,
 * underscores); raises "invalid literal" with repr(orig) (orig may be
 * CV_NULL for internal callers: the message then says "the string"). */
cv code_int_parse(code_vm *vm, const char *s, size_t n, int base, cv orig);
/* int(s, base) or float(s) of a str, non-ASCII digits and spaces included. */
cv code_num_parse_str(code_vm *vm, cv str, int base, bool is_float);
/* a * b and a + b as ints (for factorial, comb, prod). */
cv code_int_mul(code_vm *vm, cv a, cv b);

/* s[*lo..*hi) without Python whitespace at either end (code_int_str.c). */
void code_num_strip(const char *s, size_t n, size_t *lo, size_t *hi);
/* Raises t with prefix + repr(orig) (strings cut to 200 characters if cut);
 * returns CV_NULL. */
cv code_num_bad_literal(code_vm *vm, const code_type *t, const char *prefix, cv orig, bool cut);
cv code_int_to_str_base(code_vm *vm, cv v, int base);

/* ---- float helpers (code_float.c) ---------------------------------------- */

uint64_t code_float_hash(double d, cv self);
/* Python's float % and // (divmod); ZeroDivisionError with msg on b == 0. */
int code_float_divmod(code_vm *vm, double a, double b, double *div, double *mod,
                      const char *zero_msg);
/* float ** float as CPython's float_pow. */
cv code_float_pow(code_vm *vm, double a, double b);
/* The float value of a str (float()'s parsing). */
cv code_float_parse(code_vm *vm, const char *s, size_t n, cv orig);
cv code_float_binop(code_vm *vm, int op, cv a, cv b);
cv code_float_compare(code_vm *vm, cv a, cv b, int op);
/* float's methods in code_float_meth.c */
cv code_float_method_fromhex(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_float_method_hex(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_float_method_as_integer_ratio(code_vm *vm, cv *args, size_t nargs, cv kwnames);
/* Formats d the way repr does into buf (>= 32 bytes); returns the length. */
size_t code_float_repr_buf(double d, char *buf);

#endif
