/* Timeouts against a wall clock that jumps. The host's clock is shared, so
 * no test may set it; instead this binary defines its own clock_gettime(),
 * which the daemon's code linked into it calls, and which reads the wall
 * clock (CLOCK_REALTIME) an hour off. A timeout that took its end from the
 * wall clock then ends an hour late (or at once); one on the monotonic
 * clock, as every timeout must be, is unaffected. The kernel itself (a
 * futex's absolute timeout) still measures on the real clocks, exactly as
 * after a real step right after the reading. tests/faults/test_clock.py
 * checks the sources for wall-clock reads in timeout paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "api/gateway_int.h"
#include "http/server.h"
#include "util/fdio.h"

#define HOUR_NS (3600LL * 1000000000LL)

static int64_t wall_skew_ns;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (syscall(SYS_clock_gettime, id, ts) != 0)
        return -1;
    if ((id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) && wall_skew_ns) {
        int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec + wall_skew_ns;
        ts->tv_sec = ns / 1000000000LL;
        ts->tv_nsec = ns % 1000000000LL;
    }
    return 0;
}

static int64_t real_mono_ns(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void hung(int sig)
{
    (void)sig;
    static const char m[] = "a wait outlived its deadline: it follows the wall clock\n";
    if (write(2, m, sizeof(m) - 1) < 0) {
    }
    _exit(1);
}

static int setup(void **state)
{
    (void)state;
    signal(SIGALRM, hung);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    alarm(0);
    wall_skew_ns = 0;
    return 0;
}

static void test_the_interposed_wall_clock_is_off(void **state)
{
    (void)state;
    struct timespec a, b;
    wall_skew_ns = HOUR_NS;
    clock_gettime(CLOCK_REALTIME, &a);
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &b);
    assert_true(a.tv_sec - b.tv_sec >= 3599);
}

static void test_clock_now_ignores_the_wall_clock(void **state)
{
    (void)state;
    for (int k = -1; k <= 1; k += 2) {
        wall_skew_ns = k * HOUR_NS;
        int64_t real = real_mono_ns(), ours = clock_now_ns();
        assert_true(ours - real >= 0 && ours - real < 1000000000LL);
    }
}

/* A gateway call waiting for its session's turn must give up at its
 * deadline; the wait's slices were on the wall clock. */
static void test_a_turn_wait_ends_at_its_deadline(void **state)
{
    (void)state;
    http_ctx c;
    memset(&c, 0, sizeof(c));
    c.client_fd = -1;
    assert_int_equal(gw_turn_take(&c, "t", "s", clock_now_ns() + HOUR_NS), 0);
    for (int k = 1; k >= -1; k -= 2) {
        wall_skew_ns = k * HOUR_NS;   /* +: the clock stepped back an hour after the read */
        alarm(60);
        int64_t t0 = real_mono_ns();
        assert_int_equal(gw_turn_take(&c, "t", "s", clock_now_ns() + 300 * 1000000LL), -1);
        alarm(0);
        assert_true(real_mono_ns() - t0 >= 300 * 1000000LL);
    }
    wall_skew_ns = 0;
    gw_turn_give("t", "s");
    /* Free again: taken at once. */
    assert_int_equal(gw_turn_take(&c, "t", "s", clock_now_ns() + HOUR_NS), 0);
    gw_turn_give("t", "s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_interposed_wall_clock_is_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_now_ignores_the_wall_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_turn_wait_ends_at_its_deadline, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
