/* The empty tuple for test_code_str's stubs. code_val.h declares
 * code_empty_tuple_obj as a code_obj, yet code_exc.c and others read it as a
 * code_tuple (its n): defined here, where that declaration is not seen, with
 * a tuple's layout, so reading n stays inside the object (ASan checks). */
#include <stddef.h>
#include <stdint.h>

struct code_type;
extern const struct code_type code_type_tuple;

__attribute__((weak)) struct {
    const struct code_type *type;
    uint32_t rc, size;
    size_t n;
    uint64_t hash;
} code_empty_tuple_obj = {&code_type_tuple, 0x80000000u, 0, 0, 0};
