/* Exercise 03.3 -- a periodic timer without drift.
 *
 * Passes when every_start() runs a callback `count` times, run k at
 * start + k * interval: on time when the loop is on time, late by no more
 * than the loop was late when it wakes up late (no accumulation), and with
 * the times that passed while a callback was too slow skipped and counted
 * in `missed`.  The clock is virtual; a wait hook makes the loop wake up
 * late when a test wants it to.  Far from zero and for long, so that a
 * deadline made by adding interval to the last one drifts by its rounding
 * (a cheat that passed the rest: tests/grade/README.md).
 *
 *   make exercise CH=03            (against your code/03-timer-heap/exercises/)
 *   make exercise CH=03 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "every.h"
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "check_main.h"

/* ---- a virtual loop that can wake up late ---------------------------------- */

static double lateness; /* seconds added to every wait */

static double late_hook(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (timeout < 0) { /* nothing left to wait for: end the run */
        loop_stop(loop);
        return 0;
    }
    ck_assert_int_eq(loop_set_time(loop, loop_time(loop) + timeout + lateness), 0);
    return 0;
}

static loop_t *virtual_loop(double late)
{
    loop_t *loop = loop_new_virtual();
    ck_assert_ptr_nonnull(loop);
    lateness = late;
    loop_set_wait_hook(loop, late_hook, NULL);
    return loop;
}

static void finish(loop_t *loop)
{
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}

/* What the callback saw. */
#define MAXRUNS 10000
static double ran_at[MAXRUNS];
static int nran;
static double slow_by;   /* a run that takes this long (virtual seconds)... */
static int slow_run;     /* ...is this one (1-based; 0: none) */
static int stop_after;   /* lower count after this run (0: never) */

static void work(loop_t *loop, void *arg)
{
    every_t *e = arg;
    ck_assert_int_lt(nran, MAXRUNS);
    ran_at[nran++] = loop_time(loop);
    if (nran == slow_run)
        ck_assert_int_eq(loop_set_time(loop, loop_time(loop) + slow_by), 0);
    if (nran == stop_after)
        e->count = e->runs;
}

static void reset(void)
{
    nran = 0;
    slow_by = 0;
    slow_run = 0;
    stop_after = 0;
}

/* ---- the tests -------------------------------------------------------------- */

START_TEST(refuses_bad_arguments)
{
    loop_t *loop = virtual_loop(0);
    every_t e;
    errno = 0;
    ck_assert_int_eq(every_start(&e, loop, 0, 3, work, &e), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(every_start(&e, loop, -1, 3, work, &e), -1);
    ck_assert_int_eq(every_start(&e, loop, NAN, 3, work, &e), -1);
    ck_assert_int_eq(every_start(&e, loop, INFINITY, 3, work, &e), -1);
    ck_assert_int_eq(every_start(&e, loop, 1, 0, work, &e), -1);
    ck_assert_int_eq(every_start(&e, loop, 1, 3, NULL, &e), -1);
    ck_assert_int_eq(every_start(NULL, loop, 1, 3, work, NULL), -1);
    finish(loop);
}
END_TEST

/* On time: run k at start + k * interval, count runs, then nothing. */
START_TEST(runs_on_schedule)
{
    loop_t *loop = virtual_loop(0);
    reset();
    ck_assert_int_eq(loop_set_time(loop, 1000.0), 0);
    every_t e;
    ck_assert_int_eq(every_start(&e, loop, 0.1, 50, work, &e), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, 50);
    ck_assert_int_eq(e.runs, 50);
    ck_assert_int_eq(e.missed, 0);
    for (int k = 1; k <= 50; k++)
        ck_assert_msg(fabs(ran_at[k - 1] - (1000.0 + k * 0.1)) < 1e-9,
                      "run %d at %.9f, not at start + %d * interval = %.9f", k,
                      ran_at[k - 1], k, 1000.0 + k * 0.1);
    finish(loop);
}
END_TEST

/* 10,000 runs a tenth of a second apart, a million seconds after the
 * clock's zero (a machine up for twelve days): 0.1 is not a binary
 * fraction, and ten thousand additions of it to a number that large round
 * off some 2e-7 s.  Run k is computed from k: no rounding adds up. */
START_TEST(no_rounding_adds_up)
{
    loop_t *loop = virtual_loop(0);
    reset();
    const double start = 1e6;
    ck_assert_int_eq(loop_set_time(loop, start), 0);
    every_t e;
    ck_assert_int_eq(every_start(&e, loop, 0.1, 10000, work, &e), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, 10000);
    for (int k = 1; k <= 10000; k++) {
        double want = start + (double)k * 0.1;
        if (fabs(ran_at[k - 1] - want) > 1e-9)
            ck_abort_msg("run %d at %.9f, not at start + %d * interval = %.9f: a "
                         "deadline made by adding interval to the last one carries "
                         "the rounding of every addition", k, ran_at[k - 1], k, want);
    }
    ck_assert_msg(e.start == start && e.k == 10000,
                  "after 10000 runs e->start is %.9f and e->k %ld; every.h wants "
                  "start (%.9f) kept and k the number of the last run",
                  e.start, e.k, start);
    finish(loop);
}
END_TEST

/* The loop wakes up 3 ms late every time.  Each run is then 3 ms late,
 * never more: the lateness must not add up. */
START_TEST(late_wakeups_do_not_add_up)
{
    loop_t *loop = virtual_loop(0.003);
    reset();
    every_t e;
    ck_assert_int_eq(every_start(&e, loop, 0.1, 100, work, &e), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, 100);
    for (int k = 1; k <= 100; k++) {
        double late = ran_at[k - 1] - k * 0.1;
        ck_assert_msg(late > -1e-9 && late < 0.003 + 1e-9,
                      "run %d ran at %.6f: %.1f ms after start + %d * interval, though "
                      "the loop is never more than 3 ms late: the lateness adds up",
                      k, ran_at[k - 1], late * 1e3, k);
    }
    ck_assert_int_eq(e.missed, 0);
    finish(loop);
}
END_TEST

/* Run 3 (at 0.3) takes 0.35 s: it ends at 0.65, after the times of runs
 * 4, 5 and 6.  They are skipped; the next run is at 0.7. */
START_TEST(slow_run_skips_missed_times)
{
    loop_t *loop = virtual_loop(0);
    reset();
    slow_run = 3;
    slow_by = 0.35;
    every_t e;
    ck_assert_int_eq(every_start(&e, loop, 0.1, 6, work, &e), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, 6);
    static const int slot[] = {1, 2, 3, 7, 8, 9};
    for (int i = 0; i < 6; i++)
        ck_assert_msg(fabs(ran_at[i] - slot[i] * 0.1) < 1e-9,
                      "run %d at %.6f; expected %.6f (runs due at 0.4, 0.5 and 0.6 "
                      "passed during the slow run 3, which ended at 0.65: skip them)",
                      i + 1, ran_at[i], slot[i] * 0.1);
    ck_assert_msg(e.missed == 3, "missed is %ld, expected 3", e.missed);
    finish(loop);
}
END_TEST

/* Far behind: a run that takes 1000 s with a 1 ms interval skips a
 * million times, without a burst and without running for long. */
START_TEST(far_behind_skips_many)
{
    loop_t *loop = virtual_loop(0);
    reset();
    slow_run = 1;
    slow_by = 1000.0;
    every_t e;
    ck_assert_int_eq(every_start(&e, loop, 0.001, 3, work, &e), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, 3);
    /* Run 1 at 0.001 ends at 1000.001 = the time of k = 1000001 exactly,
     * or a hair off it: the next run is the first k after it. */
    double next = ran_at[1];
    ck_assert_msg(next > 1000.001 - 1e-9 && next <= 1000.002 + 1e-9,
                  "after a run that ended at 1000.001, the next ran at %.6f", next);
    ck_assert_msg(fabs(ran_at[2] - next - 0.001) < 1e-9, "runs 2 and 3 %.6f apart",
                  ran_at[2] - next);
    ck_assert_msg(e.missed >= 999999 && e.missed <= 1000000, "missed is %ld", e.missed);
    finish(loop);
}
END_TEST

/* The callback may stop the timer by lowering count. */
START_TEST(callback_can_stop_it)
{
    loop_t *loop = virtual_loop(0);
    reset();
    stop_after = 4;
    every_t e;
    ck_assert_int_eq(every_start(&e, loop, 0.5, 100, work, &e), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, 4);
    ck_assert(fabs(loop_time(loop) - 2.0) < 1e-9); /* nothing after run 4 */
    finish(loop);
}
END_TEST

/* Two periodic timers in one loop keep their own schedules. */
START_TEST(two_timers)
{
    loop_t *loop = virtual_loop(0.0005);
    reset();
    every_t a, b;
    ck_assert_int_eq(every_start(&a, loop, 0.2, 10, work, &a), 0);
    ck_assert_int_eq(every_start(&b, loop, 0.3, 10, work, &b), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, 20);
    ck_assert_int_eq(a.runs, 10);
    ck_assert_int_eq(b.runs, 10);
    ck_assert_msg(fabs(ran_at[19] - 3.0) < 0.0005 + 1e-9,
                  "b's 10th run is due at 3.0 and ran at %.6f", ran_at[19]);
    finish(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 03.3: a periodic timer without drift");
    TCase *tc = tcase_create("every");
    tcase_add_test(tc, refuses_bad_arguments);
    tcase_add_test(tc, runs_on_schedule);
    tcase_add_test(tc, no_rounding_adds_up);
    tcase_add_test(tc, late_wakeups_do_not_add_up);
    tcase_add_test(tc, slow_run_skips_missed_times);
    tcase_add_test(tc, far_behind_skips_many);
    tcase_add_test(tc, callback_can_stop_it);
    tcase_add_test(tc, two_timers);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
