/* The empty tuple's stand-in for the numbers' tests, in a file of its own:
 * code_val.h declares it as a bare code_obj, but readers look at its length
 * past the header, so the object defined here is a whole tuple (without the
 * header, which would not let the types differ). */
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
