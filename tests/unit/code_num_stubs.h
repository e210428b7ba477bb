/* What the numbers' test stubs record (code_num_stubs.c). */
#ifndef CELLA_TEST_CODE_NUM_STUBS_H
#define CELLA_TEST_CODE_NUM_STUBS_H
#include "code/code_val.h"
extern char stub_dict_keys[128][32];
extern cv stub_dict_vals[128];
extern int stub_dict_n;
#endif
