/* Exercise 2 of chapter 05: the rebuild threshold as a parameter.
 *
 * Passes when loop_set_cleanup_threshold(loop, min_scheduled, min_fraction)
 * is refused for a NaN fraction or one outside [0, 1], and step 1 of a tick
 * rebuilds the heap exactly when MORE than min_scheduled timers are
 * scheduled and MORE than min_fraction of them are cancelled; a new loop
 * keeps CPython's 100 and 0.5.  Each loop has its own threshold: setting
 * one loop's leaves the others' alone (two globals instead of the loop's
 * fields passed the rest: a cheat, tests/grade/README.md).
 *
 *   make exercise CH=05            (against your code/05-lazy-cancel/exercises/)
 *   make exercise CH=05 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_main.h"

static void nop(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

/* n timers at 10 + i (the head stays live), the last c cancelled, one tick
 * (nothing is due): how many are left in the heap? */
static size_t left_after_one_tick(size_t min_scheduled, double fraction, int n, int c)
{
    loop_t *loop = loop_new_virtual();
    ck_assert_ptr_nonnull(loop);
    ck_assert_msg(loop_set_cleanup_threshold(loop, min_scheduled, fraction) == 0,
                  "loop_set_cleanup_threshold(%zu, %g) refused: %s", min_scheduled, fraction,
                  loop_error(loop));
    handle_t **h = calloc((size_t)n, sizeof *h);
    ck_assert_ptr_nonnull(h);
    for (int i = 0; i < n; i++)
        h[i] = loop_call_at(loop, 10 + i, nop, NULL);
    for (int i = n - c; i < n; i++)
        handle_cancel(h[i]);
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    size_t left = loop_scheduled_len(loop);
    free(h);
    loop_close(loop);
    loop_free(loop);
    return left;
}

/* The default threshold, without calling the setter. */
static size_t left_default(int n, int c)
{
    loop_t *loop = loop_new_virtual();
    handle_t **h = calloc((size_t)n, sizeof *h);
    for (int i = 0; i < n; i++)
        h[i] = loop_call_at(loop, 10 + i, nop, NULL);
    for (int i = n - c; i < n; i++)
        handle_cancel(h[i]);
    loop_stop(loop);
    loop_run_forever(loop);
    size_t left = loop_scheduled_len(loop);
    free(h);
    loop_close(loop);
    loop_free(loop);
    return left;
}

START_TEST(defaults_are_cpythons)
{
    ck_assert_uint_eq(left_default(101, 51), 50);
    ck_assert_uint_eq(left_default(100, 99), 100);
    ck_assert_uint_eq(left_default(102, 51), 102);
}
END_TEST

START_TEST(a_lower_threshold)
{
    ck_assert_uint_eq(left_after_one_tick(10, 0.25, 11, 3), 8);   /* 11 > 10, 3/11 > 0.25 */
    ck_assert_uint_eq(left_after_one_tick(10, 0.25, 10, 9), 10);  /* 10 is not more than 10 */
    ck_assert_uint_eq(left_after_one_tick(10, 0.25, 12, 3), 12);  /* 3/12 is not more than 0.25 */
    ck_assert_uint_eq(left_after_one_tick(0, 0.0, 2, 1), 1);       /* any cancelled timer */
}
END_TEST

START_TEST(a_higher_threshold)
{
    ck_assert_uint_eq(left_after_one_tick(1000, 0.5, 150, 120), 150);
    ck_assert_uint_eq(left_after_one_tick(SIZE_MAX, 0.0, 150, 149), 150); /* never */
    ck_assert_uint_eq(left_after_one_tick(100, 0.9, 150, 120), 150);      /* 0.8 */
}
END_TEST

/* n timers at 10 + i in loop, the last c cancelled; handles released. */
static void schedule(loop_t *loop, int n, int c)
{
    for (int i = 0; i < n; i++) {
        handle_t *h = loop_call_at(loop, 10 + i, nop, NULL);
        ck_assert_ptr_nonnull(h);
        if (i >= n - c)
            handle_cancel(h);
    }
}

static size_t tick_and_count(loop_t *loop)
{
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    return loop_scheduled_len(loop);
}

START_TEST(each_loop_has_its_own)
{
    loop_t *a = loop_new_virtual(), *b = loop_new_virtual();
    ck_assert(a != NULL && b != NULL);
    ck_assert_int_eq(loop_set_cleanup_threshold(a, 0, 0.0), 0);
    /* b was not set: CPython's 100 and 0.5, whatever a's are. */
    schedule(b, 100, 99);
    ck_assert_msg(tick_and_count(b) == 100, "a new loop rebuilt its heap of 100 timers (99 "
                  "cancelled): it took the threshold set on another loop, not CPython's "
                  "100 and 0.5");
    ck_assert_int_eq(loop_set_cleanup_threshold(b, SIZE_MAX, 0.0), 0);
    /* a keeps its own (0, 0.0): any cancelled timer rebuilds. */
    schedule(a, 2, 1);
    ck_assert_msg(tick_and_count(a) == 1, "setting loop b's threshold changed loop a's: "
                  "keep the threshold in the loop");
    ck_assert_int_eq(loop_close(a), 0);
    ck_assert_int_eq(loop_close(b), 0);
    loop_free(a);
    loop_free(b);
}
END_TEST

START_TEST(bad_fractions_are_refused)
{
    loop_t *loop = loop_new_virtual();
    double bad[] = {NAN, -0.1, 1.5, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        ck_assert_msg(loop_set_cleanup_threshold(loop, 10, bad[i]) == -1,
                      "a fraction of %g was accepted", bad[i]);
        ck_assert_int_eq(errno, EINVAL);
    }
    ck_assert_int_eq(loop_set_cleanup_threshold(loop, 10, 1.0), 0);
    ck_assert_int_eq(loop_set_cleanup_threshold(loop, 10, 0.0), 0);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("2-threshold");
    TCase *tc = tcase_create("threshold");
    tcase_add_test(tc, defaults_are_cpythons);
    tcase_add_test(tc, a_lower_threshold);
    tcase_add_test(tc, a_higher_threshold);
    tcase_add_test(tc, each_loop_has_its_own);
    tcase_add_test(tc, bad_fractions_are_refused);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
