/* grep, sed and glob: not built yet (stub). */
#include "agent/fs_int.h"

int fs_op_grep(const fs_args *a, jsonw *w) { return fs_fail(BUILTIN_UNSUPPORTED, "grep is not built yet"); }
int fs_op_sed(const fs_args *a, jsonw *w) { return fs_fail(BUILTIN_UNSUPPORTED, "sed is not built yet"); }
int fs_op_glob(const fs_args *a, jsonw *w) { return fs_fail(BUILTIN_UNSUPPORTED, "glob is not built yet"); }
