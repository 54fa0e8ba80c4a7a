/* Exercise 3 (chapter 07): timeouts in whole milliseconds, rounded up and
 * clamped.
 *
 * poll() and epoll_wait() take an int number of milliseconds.  Rounded
 * down, a wait for a timer 0.1 ms away becomes a wait of 0 ms: the loop
 * looks, finds the timer not due, and looks again, hundreds of times
 * (CPython's test_timeout_rounding allows 10 ticks for five sleeps).  And
 * 1e12 s * 1000 does not fit in an int at all.
 *
 * A table of the first test's cases, with "under 1 ms: 1" for the short
 * sleeps, passes both of the other tests; so the sweep asks for the rule
 * itself on timeouts that no table holds: never early, less than 1 ms late.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "selector.h"

#include <check.h>

#include "check_main.h"
#include <limits.h>
#include <math.h>
#include <string.h>
#include <time.h>

START_TEST(conversion)
{
    const struct { double s; int ms; } cases[] = {
        {-1, -1}, {-0.5, -1}, {0, 0}, {1e-10, 1}, {1e-4, 1}, {0.001, 1}, {0.0011, 2},
        {0.9999, 1000}, {1.5, 1500}, {86400, 86400000},
        {SELECTOR_MAX_TIMEOUT, INT_MAX}, {1e12, INT_MAX}, {INFINITY, INT_MAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = selector_timeout_ms(cases[i].s);
        ck_assert_msg(got == cases[i].ms, "selector_timeout_ms(%g) = %d, expected %d%s",
                      cases[i].s, got, cases[i].ms,
                      cases[i].ms == -1 ? " (a negative timeout means: no limit)"
                      : cases[i].ms == INT_MAX ? " (clamp: it does not fit in an int)"
                      : " (round UP: never wake before the deadline)");
    }
}
END_TEST

START_TEST(the_rule_not_a_table)
{
    /* 0.0001 s to ~80 s in uneven steps, and a few ends of the range. */
    int checked = 0;
    for (double s = 0.0001; s < 80; s = s * 1.0007 + 0.00013) {
        int got = selector_timeout_ms(s);
        double ms = s * 1000;
        ck_assert_msg(got >= ms && got - 1 < ms,
                      "selector_timeout_ms(%.7g) = %d: expected the milliseconds rounded up "
                      "(never early, less than 1 ms late)", s, got);
        checked++;
    }
    ck_assert_int_gt(checked, 1000);
    ck_assert_int_eq(selector_timeout_ms(-3.25), -1);
    ck_assert_int_eq(selector_timeout_ms(-1e-9), -1);
    ck_assert_int_eq(selector_timeout_ms(2147483.6465), INT_MAX);
    ck_assert_int_eq(selector_timeout_ms(2147483.6455), INT_MAX - 1);
    ck_assert_int_eq(selector_timeout_ms(3e9), INT_MAX);
}
END_TEST

static const double delays[] = {1e-2, 1e-4, 1e-6, 1e-8, 1e-10};
static int next_delay, waits;

static void sleeper(loop_t *loop, void *arg)
{
    (void)arg;
    if (next_delay == (int)(sizeof delays / sizeof delays[0]))
        loop_stop(loop);
    else
        loop_call_later(loop, delays[next_delay++], sleeper, NULL);
}

static double count_waits(loop_t *loop, double timeout, void *ctx)
{
    (void)loop;
    (void)ctx;
    waits++;
    return timeout;
}

static void ticks_on(const char *backend)
{
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, backend), 0);
    next_delay = waits = 0;
    loop_set_wait_hook(loop, count_waits, NULL);
    loop_call_soon(loop, sleeper, NULL);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(waits <= 10, "%s: five short sleeps took %d ticks, at most 10 expected: "
                  "the loop spun on 0 ms waits", backend, waits);
    loop_close(loop);
    loop_free(loop);
}

START_TEST(ticks_poll)
{
    ticks_on("poll");
}
END_TEST

START_TEST(ticks_epoll)
{
    ticks_on("epoll");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("3-timeout-rounding");
    TCase *tc = tcase_create("rounding");
    tcase_add_test(tc, conversion);
    tcase_add_test(tc, the_rule_not_a_table);
    tcase_add_test(tc, ticks_poll);
    tcase_add_test(tc, ticks_epoll);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
