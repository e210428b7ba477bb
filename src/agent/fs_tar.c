/* tar archives: not built yet (stub). */
#include "agent/fs_int.h"

int fs_op_tar_create(const fs_args *a, jsonw *w) { return fs_fail(BUILTIN_UNSUPPORTED, "tar is not built yet"); }
int fs_op_tar_extract(const fs_args *a, jsonw *w) { return fs_fail(BUILTIN_UNSUPPORTED, "tar is not built yet"); }
