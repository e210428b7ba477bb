/* The math module's parts shared between code_mod_math.c (float functions,
 * the table) and code_mod_math_int.c (integer functions, prod, fsum). */
#ifndef CELLA_CODE_MOD_MATH_H
#define CELLA_CODE_MOD_MATH_H

#include "code/code_num.h"

/* fn(x) for one real argument with CPython's math_1 error rules. */
cv code_math_float1(code_vm *vm, const char *name, cv *args, size_t nargs, cv kwnames,
                    double (*fn)(double), bool can_overflow);
/* Exactly n positional arguments ("atan2 expected 2 arguments, got 1"). */
int code_math_nargs(code_vm *vm, const char *name, size_t nargs, cv kwnames, size_t n);

cv code_math_gamma(code_vm *vm, cv *args, size_t nargs, cv kwnames);    /* code_mod_math_gamma.c */
cv code_math_lgamma(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_math_gcd(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_math_lcm(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_math_factorial(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_math_comb(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_math_perm(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_math_isqrt(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_math_prod(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_math_fsum(code_vm *vm, cv *args, size_t nargs, cv kwnames);

#endif
