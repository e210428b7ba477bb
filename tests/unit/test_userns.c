#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "box/userns.h"
#include "util/rmtree.h"

static void test_range_checks(void **state)
{
    assert_int_equal(userns_check_range(USERNS_DEFAULT_BASE, USERNS_DEFAULT_SLOTS, NULL), 0);
    assert_int_equal(userns_check_range(1000, 1, NULL), -1);           /* real users' ids */
    assert_int_equal(userns_check_range(0xFFFF0000u, 1, NULL), -1);    /* reaches (uid_t)-1 */
    assert_int_equal(userns_check_range(0xFFFE0000u, 1, NULL), 0);
    assert_int_equal(userns_check_range(0x70008000u, 1, NULL), -1);   /* not 64K-aligned */
    assert_int_equal(userns_check_range(0x70000000u, 0, NULL), -1);
    assert_int_equal(userns_check_range(0x70000000u, 0x10000, NULL), -1);
}

static void test_slot_base(void **state)
{
    assert_int_equal(userns_slot_base(0x70000000u, 0), 0x70000000u);
    assert_int_equal(userns_slot_base(0x70000000u, 3), 0x70000000u + 3 * 65536);
    /* Neighbouring slots never overlap. */
    assert_true(userns_slot_base(0x70000000u, 1) - userns_slot_base(0x70000000u, 0) >=
                USERNS_RANGE);
}

static void test_map_text(void **state)
{
    char buf[64];
    assert_int_equal(userns_map_text(true, 0x70010000u, 0, 0, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "0 1879113728 65536\n");
    assert_int_equal(userns_map_text(false, 0, 1000, 1234, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "1000 1234 1\n");
    assert_int_equal(userns_map_text(true, 1, 0, 0, buf, 4), -1);    /* too small */
}

static void test_slots_are_exclusive(void **state)
{
    char dir[] = "/tmp/cella-slots-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    userns_slot a, b, c;
    assert_int_equal(userns_slot_acquire(dfd, 0x70000000u, 2, 0, &a, NULL), 0);
    assert_int_equal(a.slot, 0);
    assert_int_equal(a.host_base, 0x70000000u);
    /* Starting at the held slot moves on to the next free one. */
    assert_int_equal(userns_slot_acquire(dfd, 0x70000000u, 2, 0, &b, NULL), 0);
    assert_int_equal(b.slot, 1);
    cella_err err;
    assert_int_equal(userns_slot_acquire(dfd, 0x70000000u, 2, 5, &c, &err), -1);
    assert_non_null(strstr(err.msg, "in use"));
    userns_slot_release(&a);
    assert_int_equal(a.lock_fd, -1);
    assert_int_equal(userns_slot_acquire(dfd, 0x70000000u, 2, 1, &c, NULL), 0);
    assert_int_equal(c.slot, 0);
    /* Locks are per uid range: another base reaching the same range meets
     * the same lock. */
    userns_slot d;
    assert_int_equal(userns_slot_try(dfd, 0x70000000u + 65536, &d, NULL), 0);   /* b holds it */
    assert_int_equal(userns_slot_acquire(dfd, 0x70000000u + 65536, 1, 0, &d, &err), -1);
    userns_slot_release(&b);
    assert_int_equal(userns_slot_try(dfd, 0x70000000u + 65536, &d, NULL), 1);
    userns_slot_release(&d);
    userns_slot_release(&c);
    close(dfd);
    assert_int_equal(rmtree_at(AT_FDCWD, dir, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_checks),
        cmocka_unit_test(test_slot_base),
        cmocka_unit_test(test_map_text),
        cmocka_unit_test(test_slots_are_exclusive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
