/* The workspace quota across processes (agent/fs_quota.c): the page is
 * shared through fork, as the agent shares it with the children that run
 * file operations. There is no /workspace on the build host, so usage walks
 * to 0 and what is tested is the reservations, the commit check and the
 * lock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/fs_quota.h"

static char *quota_kv[] = {"quota=1048576", NULL};
static const fs_args quota_args = {.kv = quota_kv};

static int setup(void **state)
{
    struct stat st;
    if (stat("/workspace", &st) == 0)
        return -1;                /* a real workspace here would count: not this test's host */
    return fs_quota_init();
}

/* Runs fn in a child; returns its exit status. The child's slot is left
 * for the parent to release, as a killed operation's is. */
static int in_child(int (*fn)(void), pid_t *pid)
{
    *pid = fork();
    if (*pid == 0)
        _exit(fn());
    int status;
    assert_int_equal(waitpid(*pid, &status, 0), *pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int child_reserves(void)
{
    fsq c;
    fsq_begin(&c, &quota_args);
    /* 700,000 are the parent's: 400,000 more would pass 1 MiB, 300,000 fit. */
    if (fsq_reserve(&c, 400000, 0, "b") != BUILTIN_QUOTA)
        return 1;
    return fsq_reserve(&c, 300000, 0, "c") == BUILTIN_OK ? 0 : 2;
}

static void test_reservations_add_up_across_processes(void **state)
{
    (void)state;
    fsq q;
    assert_int_equal(fsq_begin(&q, &quota_args), BUILTIN_OK);
    assert_int_equal(fsq_reserve(&q, 700000, 0, "a"), BUILTIN_OK);
    pid_t pid;
    assert_int_equal(in_child(child_reserves, &pid), 0);
    /* The dead child's 300,000 count until it is reaped (fs_quota_reaped). */
    fsq r;
    fsq_begin(&r, &quota_args);
    assert_int_equal(fsq_reserve(&r, 100000, 0, "d"), BUILTIN_QUOTA);
    fs_quota_reaped(pid);
    assert_int_equal(fsq_reserve(&r, 100000, 0, "d"), BUILTIN_OK);
    /* Reserving ahead takes what is left, never more. */
    assert_int_equal(fsq_reserve(&r, 150000, 1u << 30, "d"), BUILTIN_OK);
    assert_true(r.reserved >= 150000 && r.reserved <= 1048576 - 700000);
    fsq_end(&r);
    fsq_end(&q);
}

static int applied;

static int apply(void *arg)
{
    (void)arg;
    applied++;
    return BUILTIN_OK;
}

static void test_commit_checks_against_the_others(void **state)
{
    (void)state;
    fsq q, c;
    fsq_begin(&q, &quota_args);
    fsq_begin(&c, &quota_args);
    assert_int_equal(fsq_reserve(&q, 700000, 0, "a"), BUILTIN_OK);
    /* A commit that would pass the quota with the other's reservation: refused, not applied. */
    applied = 0;
    assert_int_equal(fsq_commit(&c, 500000, NULL, apply, NULL, "c"), BUILTIN_QUOTA);
    assert_int_equal(applied, 0);
    assert_int_equal(fsq_commit(&c, 300000, NULL, apply, NULL, "c"), BUILTIN_OK);
    assert_int_equal(applied, 1);
    /* Without a quota, a commit just applies. */
    fsq none;
    char *kv[] = {NULL};
    fs_args no = {.kv = kv};
    fsq_begin(&none, &no);
    assert_int_equal(fsq_commit(&none, UINT64_MAX / 2, NULL, apply, NULL, "n"), BUILTIN_OK);
    assert_int_equal(applied, 2);
    fsq_end(&c);
    fsq_end(&q);
}

static int die_holding_the_lock(void *arg)
{
    (void)arg;
    _exit(0);
}

static int child_dies_mid_commit(void)
{
    fsq c;
    fsq_begin(&c, &quota_args);
    fsq_commit(&c, 1, NULL, die_holding_the_lock, NULL, "x");
    return 1;                     /* never reached */
}

static void test_a_holder_that_dies_hands_the_lock_on(void **state)
{
    (void)state;
    pid_t pid;
    assert_int_equal(in_child(child_dies_mid_commit, &pid), 0);
    fs_quota_reaped(pid);
    /* Robust: the next caller gets the lock at once, not after the wait. */
    fsq q;
    fsq_begin(&q, &quota_args);
    assert_int_equal(fsq_reserve(&q, 1000, 0, "after"), BUILTIN_OK);
    assert_int_equal(fsq_commit(&q, 1000, NULL, apply, NULL, "after"), BUILTIN_OK);
    fsq_end(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reservations_add_up_across_processes),
        cmocka_unit_test(test_commit_checks_against_the_others),
        cmocka_unit_test(test_a_holder_that_dies_hands_the_lock_on),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
