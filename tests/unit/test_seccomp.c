/* The embedded filter is what the rules compile to today, and it starts
 * with the hand-written prologue (foreign ABIs killed, x32 killed). The
 * behaviour itself is tested inside real sandboxes by tests/probe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>

#include "box/seccomp.h"
#include "util/alloc.h"

static void test_embedded_matches_rules(void **state)
{
    uint8_t *bpf;
    size_t len;
    cella_err err;
    assert_int_equal(box_seccomp_compile(&bpf, &len, &err), 0);
    assert_int_equal(len, box_seccomp_bpf_len);
    assert_memory_equal(bpf, box_seccomp_bpf, len);
    cella_free(bpf);
}

static void test_prologue(void **state)
{
    const struct sock_filter *f = (const struct sock_filter *)box_seccomp_bpf;
    assert_true(box_seccomp_bpf_len / sizeof(*f) > 20);
    assert_true(box_seccomp_bpf_len / sizeof(*f) <= BPF_MAXINSNS);
    assert_int_equal(f[0].k, offsetof(struct seccomp_data, arch));
    assert_int_equal(f[1].k, AUDIT_ARCH_X86_64);
    assert_int_equal(f[2].k, SECCOMP_RET_KILL_PROCESS);
    assert_int_equal(f[4].k, 0x40000000u);     /* x32 bit */
    assert_int_equal(f[5].k, SECCOMP_RET_KILL_PROCESS);
    assert_int_equal(f[6].k, SECCOMP_FIRST_UNKNOWN_NR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_matches_rules),
        cmocka_unit_test(test_prologue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
