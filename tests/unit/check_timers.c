/* check_timers.c -- the rules of call_later, call_at and loop_time (chapter 03).
 *
 * Written against chapter 03's loop.h and run against every later stage:
 *   - timers run in deadline order, behind the call_soon callbacks of the
 *     same tick (article 000, 6.1.4); call_later(-1) then call_later(-2)
 *     run the -2 first; equal deadlines leave in CPython's heapq order;
 *   - a timer is due when `when < now + clock_resolution`;
 *   - the poll timeout, observed through the wait hook of a virtual clock:
 *     0 with callbacks ready or a stop requested, the nearest deadline
 *     minus now, clamped to [0, 86400], or -1 (block) with nothing to do;
 *   - NaN and infinite delays and deadlines, NULL callbacks and a closed
 *     loop are refused; the virtual clock never goes backwards.
 * Freeing (timers left in the heap at close) is checked under ASan and
 * valgrind.
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/NN-slug tests/unit/check_timers.c build/NN-slug/libloop.a \
 *      $(pkg-config --cflags --libs check) -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

/* ---- helpers ----------------------------------------------------------- */

/* virtual_loop(): its wait hook records each timeout the loop asked for
 * (timeouts[0 .. ticks)) and jumps the clock as the default hook does; with
 * nothing to wait for (-1) it stops the loop, so that no test can block. */
#include "vloop.h"

/* What ran, in order, by name, space-separated (ran, labels.h); and when. */
static double ran_at[64];

static void note(loop_t *loop, void *arg)
{
    ran_at[nran] = loop_time(loop);
    label_add(arg);
}

static void note_and_stop(loop_t *loop, void *arg)
{
    note(loop, arg);
    loop_stop(loop);
}

/* A refused call: errno `err` and a message in loop_error() that says why
 * (it contains `says`).  Both, for every refused argument: a NaN deadline
 * that some other check happens to catch ("out of memory for the timer
 * heap", ENOMEM) is not refused for the right reason. */
#define REFUSED(loop, call, err, says)                                               \
    do {                                                                               \
        errno = 0;                                                                     \
        int failed_ = (call) == NULL;                                                  \
        int errno_ = errno;                                                            \
        ck_assert_msg(failed_, "%s was not refused", #call);                           \
        ck_assert_msg(errno_ == (err), "%s: errno %d (%s), expected %s", #call, errno_, \
                      strerror(errno_), #err);                                         \
        ck_assert_msg(strstr(loop_error(loop), (says)) != NULL,                        \
                      "%s: loop_error() says \"%s\", expected a message with \"%s\"",   \
                      #call, loop_error(loop), (says));                                \
    } while (0)

/* The same for a call that returns -1 instead of NULL. */
static void *as_ptr(int rc)
{
    return rc == -1 ? NULL : (void *)"not refused";
}

/* ---- the clock ----------------------------------------------------------- */

START_TEST(real_clock_is_monotonic)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    double t = loop_time(loop);
    ck_assert(t > 0);
    for (int i = 0; i < 1000; i++) {
        double u = loop_time(loop);
        ck_assert(u >= t);
        t = u;
    }
    REFUSED(loop, as_ptr(loop_set_time(loop, t + 1)), EINVAL, "virtual"); /* not a virtual clock */
    finish(loop);
}
END_TEST

START_TEST(virtual_clock_rules)
{
    loop_t *loop = loop_new_virtual();
    ck_assert(loop_time(loop) == 0.0);
    ck_assert_int_eq(loop_set_time(loop, 2.5), 0);
    ck_assert(loop_time(loop) == 2.5);
    ck_assert_int_eq(loop_set_time(loop, 2.5), 0); /* standing still is fine */
    REFUSED(loop, as_ptr(loop_set_time(loop, 1.0)), EINVAL, "backwards");
    REFUSED(loop, as_ptr(loop_set_time(loop, NAN)), EINVAL, "finite");
    REFUSED(loop, as_ptr(loop_set_time(loop, INFINITY)), EINVAL, "finite");
    REFUSED(loop, as_ptr(loop_set_time(loop, -INFINITY)), EINVAL, "finite");
    ck_assert(loop_time(loop) == 2.5);
    finish(loop);
}
END_TEST

/* The default hook of a virtual loop jumps to each deadline: no wall time. */
START_TEST(autojump)
{
    loop_t *loop = loop_new_virtual();
    labels_reset();
    ck_assert_ptr_nonnull(loop_call_later(loop, 3600, note_and_stop, "hour"));
    ck_assert_ptr_nonnull(loop_call_later(loop, 60, note, "minute"));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "minute hour");
    ck_assert(ran_at[0] == 60.0 && ran_at[1] == 3600.0);
    finish(loop);
}
END_TEST

/* ---- order --------------------------------------------------------------- */

START_TEST(deadline_order)
{
    loop_t *loop = virtual_loop();
    loop_call_later(loop, 0.3, note, "c");
    loop_call_later(loop, 0.1, note, "a");
    loop_call_at(loop, 0.2, note, "b");
    loop_call_later(loop, 0.4, note_and_stop, "d");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "a b c d");
    ck_assert(ran_at[0] == 0.1 && ran_at[1] == 0.2);
    finish(loop);
}
END_TEST

/* CPython's test_call_later_negative_delays. */
START_TEST(negative_delays)
{
    loop_t *loop = virtual_loop();
    loop_call_later(loop, -1, note, "a");
    loop_call_later(loop, -2, note, "b");
    loop_call_later(loop, 0, note_and_stop, "c");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "b a c");
    ck_assert_int_eq(ticks, 1); /* all due in the first tick */
    finish(loop);
}
END_TEST

/* Article 000, 6.1.4: call_soon callbacks run before the call_later(0)
 * timers of the same tick, whatever the order they were scheduled in. */
START_TEST(soon_before_later0)
{
    loop_t *loop = virtual_loop();
    loop_call_later(loop, 0, note, "later0");
    loop_call_soon(loop, note, "soon");
    loop_call_soon(loop, note, "soon2");
    loop_call_later(loop, 0, note_and_stop, "later0_2");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "soon soon2 later0 later0_2");
    finish(loop);
}
END_TEST

/* DESIGN 5.3: 20 timers at one deadline, then one later: CPython's heapq
 * pops them as 0 2 6 14 13 19 18 17 16 15 5 11 12 10 9 8 7 1 3 4, then 20. */
static const char *names[] = {"0",  "1",  "2",  "3",  "4",  "5",  "6",
                              "7",  "8",  "9",  "10", "11", "12", "13",
                              "14", "15", "16", "17", "18", "19", "20"};

START_TEST(equal_deadlines_heapq_order)
{
    loop_t *loop = virtual_loop();
    for (int i = 0; i < 20; i++)
        ck_assert_ptr_nonnull(loop_call_at(loop, 1.0, note, (void *)names[i]));
    ck_assert_ptr_nonnull(loop_call_at(loop, 2.0, note_and_stop, (void *)names[20]));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "0 2 6 14 13 19 18 17 16 15 5 11 12 10 9 8 7 1 3 4 20");
    finish(loop);
}
END_TEST

/* A timer scheduled by a callback, even with delay 0, is not due before
 * the next tick's step "move the due timers": it runs in the next tick. */
static void schedules_later0(loop_t *loop, void *arg)
{
    note(loop, arg);
    loop_call_later(loop, 0, note_and_stop, "inner");
}

START_TEST(later0_from_callback_runs_next_tick)
{
    loop_t *loop = virtual_loop();
    loop_call_soon(loop, schedules_later0, "outer");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "outer inner");
    ck_assert_int_eq(ticks, 2);
    ck_assert(timeouts[1] == 0); /* the timer was already due */
    finish(loop);
}
END_TEST

/* ---- due: when < now + clock_resolution ---------------------------------- */

static int still_ticks;
static double still_hook(loop_t *loop, double timeout, void *ctx)
{
    (void)timeout;
    (void)ctx;
    if (++still_ticks == 2)
        loop_stop(loop);
    return 0; /* time stands still at 0 */
}

START_TEST(due_within_clock_resolution)
{
    loop_t *loop = loop_new_virtual(); /* clock_resolution 1e-9 */
    labels_reset();
    still_ticks = 0;
    loop_set_wait_hook(loop, still_hook, NULL);
    loop_call_at(loop, 0.5e-9, note, "within");
    loop_call_at(loop, 1e-9, note, "at_resolution");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "within"); /* 1e-9 < 0 + 1e-9 is false: not due */
    ck_assert_int_eq(still_ticks, 2);
    finish(loop); /* frees the timer that never ran */
}
END_TEST

/* ---- the poll timeout ------------------------------------------------------ */

START_TEST(timeout_zero_when_ready_or_stopping)
{
    loop_t *loop = virtual_loop();
    loop_call_later(loop, 5, note, "far");
    loop_call_soon(loop, note, "now");
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(ticks, 1);
    ck_assert(timeouts[0] == 0);

    ticks = 0;
    loop_stop(loop); /* nothing ready, but a stop: do not wait for "far" */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(ticks, 1);
    ck_assert(timeouts[0] == 0);
    finish(loop);
}
END_TEST

START_TEST(timeout_until_nearest_timer)
{
    loop_t *loop = virtual_loop();
    loop_call_later(loop, 7.25, note_and_stop, "b");
    loop_call_later(loop, 2.5, note, "a");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(ticks, 2);
    ck_assert(timeouts[0] == 2.5);
    ck_assert(timeouts[1] == 7.25 - 2.5);
    finish(loop);
}
END_TEST

START_TEST(timeout_clamped_to_a_day)
{
    loop_t *loop = virtual_loop();
    loop_call_later(loop, 200000, note_and_stop, "far");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(ticks, 3); /* 86400 + 86400 + 27200 */
    ck_assert(timeouts[0] == 86400 && timeouts[1] == 86400);
    ck_assert(timeouts[2] == 200000 - 2 * 86400.0);
    ck_assert(ran_at[0] == 200000);
    finish(loop);
}
END_TEST

START_TEST(timeout_zero_for_overdue_timer)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_set_time(loop, 10), 0);
    loop_call_at(loop, 3, note_and_stop, "overdue"); /* when - now = -7 */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(ticks, 1);
    ck_assert(timeouts[0] == 0 && !signbit(timeouts[0]));
    ck_assert(ran_at[0] == 10);
    finish(loop);
}
END_TEST

START_TEST(timeout_block_when_nothing)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_run_forever(loop), 0); /* the hook stops it */
    ck_assert_int_eq(ticks, 1);
    ck_assert(timeouts[0] < 0);
    finish(loop);
}
END_TEST

/* ---- refusals -------------------------------------------------------------- */

START_TEST(bad_arguments_refused)
{
    loop_t *loop = loop_new_virtual();
    REFUSED(loop, loop_call_later(loop, NAN, note, "x"), EINVAL, "NaN");
    REFUSED(loop, loop_call_later(loop, INFINITY, note, "x"), EINVAL, "infinite");
    REFUSED(loop, loop_call_later(loop, -INFINITY, note, "x"), EINVAL, "infinite");
    REFUSED(loop, loop_call_at(loop, NAN, note, "x"), EINVAL, "NaN");
    REFUSED(loop, loop_call_at(loop, INFINITY, note, "x"), EINVAL, "infinite");
    REFUSED(loop, loop_call_at(loop, -INFINITY, note, "x"), EINVAL, "infinite");
    REFUSED(loop, loop_call_later(loop, 1, NULL, "x"), EINVAL, "NULL");
    REFUSED(loop, loop_call_at(loop, 1, NULL, "x"), EINVAL, "NULL");
    /* Nothing refused went into the heap: one tick runs nothing. */
    labels_reset();
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, 0);
    ck_assert_int_eq(loop_close(loop), 0);
    REFUSED(loop, loop_call_later(loop, 1, note, "x"), EINVAL, "loop is closed");
    REFUSED(loop, loop_call_at(loop, 1, note, "x"), EINVAL, "loop is closed");
    REFUSED(loop, loop_call_later(loop, NAN, note, "x"), EINVAL, "NaN");
    loop_free(loop);
}
END_TEST

/* Timers that never ran are freed by close (ASan / valgrind check it). */
START_TEST(close_frees_pending_timers)
{
    loop_t *loop = loop_new_virtual();
    for (int i = 0; i < 100; i++)
        ck_assert_ptr_nonnull(loop_call_later(loop, i, note, "x"));
    finish(loop);
    loop = loop_new();
    ck_assert_ptr_nonnull(loop_call_later(loop, 1, note, "x"));
    loop_free(loop); /* free without close frees them too */
}
END_TEST

/* The real clock: a 30 ms timer runs after 30 ms, not much later. */
START_TEST(real_clock_timer)
{
    loop_t *loop = loop_new();
    labels_reset();
    double t0 = loop_time(loop);
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.030, note_and_stop, "t"));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert(ran_at[0] - t0 >= 0.030);
    ck_assert(ran_at[0] - t0 < 0.030 + 0.5); /* generous: valgrind is slow */
    finish(loop);
}
END_TEST

static Suite *timers_suite(void)
{
    Suite *s = suite_create("timers");
    TCase *tc = tcase_create("timers");
    tcase_add_test(tc, real_clock_is_monotonic);
    tcase_add_test(tc, virtual_clock_rules);
    tcase_add_test(tc, autojump);
    tcase_add_test(tc, deadline_order);
    tcase_add_test(tc, negative_delays);
    tcase_add_test(tc, soon_before_later0);
    tcase_add_test(tc, equal_deadlines_heapq_order);
    tcase_add_test(tc, later0_from_callback_runs_next_tick);
    tcase_add_test(tc, due_within_clock_resolution);
    tcase_add_test(tc, timeout_zero_when_ready_or_stopping);
    tcase_add_test(tc, timeout_until_nearest_timer);
    tcase_add_test(tc, timeout_clamped_to_a_day);
    tcase_add_test(tc, timeout_zero_for_overdue_timer);
    tcase_add_test(tc, timeout_block_when_nothing);
    tcase_add_test(tc, bad_arguments_refused);
    tcase_add_test(tc, close_frees_pending_timers);
    tcase_add_test(tc, real_clock_timer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(timers_suite());
}
