/* check_rounding.c -- the poll timeout reaches select() rounded UP to a
 * microsecond (chapter 03's to_timeval), so the loop never wakes before a
 * deadline only to find the timer not due yet and tick again.
 *
 * An early wake changes no callback and no trace: the loop just spins one
 * more tick.  So the test looks at what select() itself is given: it is
 * linked with -Wl,--wrap=select (tests/suites.mk, rounding_LDFLAGS), and
 * __wrap_select records the timeval, then only looks (timeout 0).  The wait
 * hook of a real-clock loop sets the timeout the loop passes on.
 * From chapter 07 on, the loop runs on a selector: this suite checks the
 * select backend (LOOP_BACKEND=select, the default) and has nothing to say
 * about the others, which round to milliseconds (check_selector and
 * exercise 07/3 test those).
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include "check_main.h"

int __real_select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout);
int __wrap_select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout);

static bool seen_null;
static struct timeval seen;
static int calls;

int __wrap_select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
    calls++;
    seen_null = timeout == NULL;
    if (timeout != NULL)
        seen = *timeout;
    struct timeval zero = {0, 0};
    return __real_select(nfds, r, w, e, &zero);
}

static double hook_timeout;

static double fixed_timeout(loop_t *loop, double timeout, void *ctx)
{
    (void)loop;
    (void)timeout;
    (void)ctx;
    return hook_timeout;
}

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* Stage 07 on, run on another backend than select: nothing to check. */
static bool select_not_used(void)
{
    const char *b = getenv("LOOP_BACKEND");
    if (b == NULL || strcmp(b, "select") == 0)
        return false;
    printf("check_rounding: the %s backend does not call select(): skipped\n", b);
    return true;
}

/* One tick of a real-clock loop whose poll waits `timeout` seconds: what
 * did select() get? */
static void one_tick_with(double timeout)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    hook_timeout = timeout;
    loop_set_wait_hook(loop, fixed_timeout, NULL);
    ck_assert_ptr_nonnull(loop_call_soon(loop, stop, NULL));
    calls = 0;
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(calls, 1);
    loop_close(loop);
    loop_free(loop);
}

static void expect(double timeout, long sec, long usec)
{
    one_tick_with(timeout);
    ck_assert_msg(!seen_null, "a timeout of %g s reached select() as NULL (block)", timeout);
    ck_assert_msg(seen.tv_sec == sec && seen.tv_usec == usec,
                  "a timeout of %.9g s reached select() as {%ld s, %ld us}, not {%ld, %ld}",
                  timeout, (long)seen.tv_sec, (long)seen.tv_usec, sec, usec);
}

START_TEST(fractions_of_a_microsecond_round_up)
{
    if (select_not_used())
        return;
    expect(1.5e-6, 0, 2);
    expect(1e-7, 0, 1);       /* never 0: that would be a busy tick before the deadline */
    expect(2.0000001, 2, 1);
}
END_TEST

START_TEST(whole_microseconds_are_kept)
{
    if (select_not_used())
        return;
    expect(0, 0, 0);
    expect(0.25, 0, 250000);
    expect(3, 3, 0);
}
END_TEST

START_TEST(minus_one_blocks)
{
    if (select_not_used())
        return;
    one_tick_with(-1);
    ck_assert_msg(seen_null, "a timeout of -1 must reach select() as NULL (block)");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rounding");
    TCase *tc = tcase_create("to_timeval");
    tcase_add_test(tc, fractions_of_a_microsecond_round_up);
    tcase_add_test(tc, whole_microseconds_are_kept);
    tcase_add_test(tc, minus_one_blocks);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
