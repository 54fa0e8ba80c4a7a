/* check_cancel.c -- cancellable handles and lazy cleanup (chapter 05).
 *
 * Written against chapter 05's loop.h and run against every later stage:
 *   - ownership (run it under ASan and valgrind: that is the test): a
 *     handle cancelled before it runs, after it ran (kept with
 *     handle_retain), twice, from inside its own callback, from another
 *     callback of the same tick, after loop_close() and loop_free();
 *   - CPython's accounting: timer_cancelled_count rises only for a timer
 *     still in the heap, and only once; step 1 pops cancelled timers at the
 *     head (and decrements the count); a cancelled timer that leaves the
 *     heap as due keeps the count up (CPython does the same); the heap is
 *     rebuilt when MORE than 100 timers are scheduled and MORE than half are
 *     cancelled, and not at 100, nor at exactly half; the rebuild keeps
 *     CPython's order of equal deadlines;
 *   - cancelled handles in the ready deque are skipped.
 * Each expectation was checked against CPython 3.11 (loop._scheduled,
 * loop._timer_cancelled_count).
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/NN-slug tests/unit/check_cancel.c build/NN-slug/libloop.a \
 *      $(pkg-config --cflags --libs check) -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

/* ---- helpers ----------------------------------------------------------- */

/* virtual_loop(): its hook jumps the clock as the default hook does and
 * stops instead of blocking; finish() closes and frees it.  ran holds the
 * names of the callbacks that ran, space-separated. */
#include "vloop.h"

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    label_add(arg);
}

static void one_tick(loop_t *loop)
{
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

static void run_all(loop_t *loop)
{
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

/* A callback that acts on a handle it was given. */
typedef struct act {
    const char *name;
    handle_t *target; /* the handle to cancel (may be its own) */
    handle_t *self;
    int was_cancelled;
    size_t count_after; /* loop_timer_cancelled_count() after the cancel */
} act_t;

static void cancel_target(loop_t *loop, void *arg)
{
    act_t *a = arg;
    note(loop, (void *)a->name);
    handle_cancel(a->target);
    a->was_cancelled = handle_cancelled(a->target);
    a->count_after = loop_timer_cancelled_count(loop);
}

/* ---- ownership ---------------------------------------------------------- */

START_TEST(cancel_before_it_runs)
{
    loop_t *loop = virtual_loop();
    handle_t *a = loop_call_soon(loop, note, "a");
    loop_call_soon(loop, note, "b");
    handle_t *t = loop_call_later(loop, 1, note, "t");
    loop_call_later(loop, 2, note, "u");
    handle_cancel(a); /* borrowed pointers: neither has run */
    handle_cancel(t);
    ck_assert(handle_cancelled(a));
    ck_assert(handle_cancelled(t));
    run_all(loop);
    ck_assert_str_eq(ran, "b u");
    finish(loop);
}
END_TEST

START_TEST(cancel_after_it_ran_needs_a_kept_handle)
{
    loop_t *loop = virtual_loop();
    handle_t *s = loop_call_soon(loop, note, "s");
    handle_t *t = loop_call_later(loop, 1, note, "t");
    handle_retain(s);
    handle_retain(t);
    run_all(loop);
    ck_assert_str_eq(ran, "s t");
    ck_assert(!handle_cancelled(s));
    handle_cancel(s); /* it ran: only the flag changes, as in asyncio */
    handle_cancel(t);
    ck_assert(handle_cancelled(s));
    ck_assert(handle_cancelled(t));
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 0); /* t was not in the heap */
    handle_release(s);
    handle_release(t);
    finish(loop);
}
END_TEST

START_TEST(cancel_twice)
{
    loop_t *loop = virtual_loop();
    handle_t *t = loop_call_later(loop, 1, note, "t");
    handle_t *s = loop_call_soon(loop, note, "s");
    handle_cancel(t);
    handle_cancel(t);
    handle_cancel(s);
    handle_cancel(s);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 1);
    run_all(loop);
    ck_assert_str_eq(ran, "");
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 0); /* popped at the head */
    finish(loop);
}
END_TEST

START_TEST(cancel_itself_from_its_callback)
{
    loop_t *loop = virtual_loop();
    act_t soon = {.name = "soon"}, timer = {.name = "timer"};
    soon.self = soon.target = loop_call_soon(loop, cancel_target, &soon);
    timer.self = timer.target = loop_call_later(loop, 1, cancel_target, &timer);
    run_all(loop);
    ck_assert_str_eq(ran, "soon timer");
    ck_assert(soon.was_cancelled);
    ck_assert(timer.was_cancelled);
    ck_assert_uint_eq(timer.count_after, 0); /* a running timer is not in the heap */
    finish(loop);
}
END_TEST

static void retain_self(loop_t *loop, void *arg)
{
    act_t *a = arg;
    note(loop, (void *)a->name);
    handle_retain(a->self); /* valid: it is running */
}

START_TEST(retain_from_its_callback)
{
    loop_t *loop = virtual_loop();
    act_t a = {.name = "a"};
    a.self = loop_call_soon(loop, retain_self, &a);
    run_all(loop);
    ck_assert_str_eq(ran, "a");
    ck_assert(!handle_cancelled(a.self)); /* still ours */
    handle_cancel(a.self);
    handle_release(a.self);
    finish(loop);
}
END_TEST

START_TEST(cancel_another_in_the_same_tick)
{
    loop_t *loop = virtual_loop();
    /* Two timers due in the same tick: the first cancels the second, which
     * is already in the ready deque (not in the heap: no count). */
    act_t first = {.name = "first"};
    loop_call_at(loop, 1, cancel_target, &first);
    first.target = loop_call_at(loop, 1, note, "second");
    /* Two soon callbacks: the first cancels the second. */
    act_t s1 = {.name = "s1"};
    loop_call_soon(loop, cancel_target, &s1);
    s1.target = loop_call_soon(loop, note, "s2");
    run_all(loop);
    ck_assert_str_eq(ran, "s1 first");
    ck_assert_uint_eq(first.count_after, 0);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 0);
    finish(loop);
}
END_TEST

START_TEST(cancel_a_later_timer_from_a_callback)
{
    loop_t *loop = virtual_loop();
    act_t a = {.name = "a"};
    loop_call_at(loop, 1, cancel_target, &a);
    a.target = loop_call_at(loop, 2, note, "b");
    run_all(loop);
    ck_assert_str_eq(ran, "a");
    ck_assert_uint_eq(a.count_after, 1); /* b was still in the heap */
    ck_assert_uint_eq(loop_scheduled_len(loop), 0);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 0);
    finish(loop);
}
END_TEST

START_TEST(kept_handles_outlive_the_loop)
{
    loop_t *loop = virtual_loop();
    handle_t *t = loop_call_later(loop, 1, note, "t");
    handle_t *s = loop_call_soon(loop, note, "s");
    handle_t *c = loop_call_later(loop, 5, note, "c");
    handle_retain(t);
    handle_retain(s);
    handle_retain(c);
    handle_cancel(c);
    finish(loop); /* none of them ran; the loop drops its references */
    handle_cancel(t);
    handle_cancel(s);
    handle_cancel(c);
    ck_assert(handle_cancelled(t));
    handle_release(t);
    handle_release(s);
    handle_release(c);
    ck_assert_str_eq(ran, "");
}
END_TEST

START_TEST(release_does_not_cancel)
{
    loop_t *loop = virtual_loop();
    handle_t *t = loop_call_later(loop, 1, note, "t");
    handle_retain(t);
    handle_release(t); /* back to borrowed: the loop still runs it */
    handle_cancel(NULL);
    handle_release(NULL);
    run_all(loop);
    ck_assert_str_eq(ran, "t");
    finish(loop);
}
END_TEST

/* NULL is "no handle" -- what a refused call returns -- to all four
 * handle functions alike (loop.h): retain, release and cancel ignore it,
 * and cancelled() says -1 with EINVAL.  Before, retain and cancelled
 * dereferenced it. */
START_TEST(null_handle_is_not_a_crash)
{
    handle_retain(NULL);
    handle_release(NULL);
    handle_cancel(NULL);
    errno = 0;
    ck_assert_int_eq(handle_cancelled(NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    /* A refused call's NULL, used as a program would. */
    loop_t *loop = virtual_loop();
    handle_t *h = loop_call_soon(loop, NULL, NULL);
    ck_assert_ptr_null(h);
    handle_retain(h);
    handle_cancel(h);
    ck_assert_int_eq(handle_cancelled(h), -1);
    handle_release(h);
    finish(loop);
}
END_TEST

/* ---- accounting --------------------------------------------------------- */

START_TEST(count_rises_once_and_only_for_scheduled_timers)
{
    loop_t *loop = virtual_loop();
    handle_t *t1 = loop_call_later(loop, 1, note, "t1");
    handle_t *t2 = loop_call_later(loop, 2, note, "t2");
    handle_t *s = loop_call_soon(loop, note, "s");
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 0);
    handle_cancel(t2);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 1);
    handle_cancel(t2);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 1);
    handle_cancel(s); /* not a timer */
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 1);
    ck_assert_uint_eq(loop_scheduled_len(loop), 2); /* t2 stays in the heap */
    (void)t1;
    finish(loop);
}
END_TEST

START_TEST(cancelled_timers_at_the_head_are_popped)
{
    loop_t *loop = virtual_loop();
    handle_t *a = loop_call_later(loop, 1, note, "a");
    handle_t *b = loop_call_later(loop, 2, note, "b");
    loop_call_later(loop, 3, note, "c");
    handle_t *d = loop_call_later(loop, 4, note, "d");
    handle_cancel(a);
    handle_cancel(b);
    handle_cancel(d);
    ck_assert_uint_eq(loop_scheduled_len(loop), 4);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 3);
    one_tick(loop); /* step 1 pops a and b; d is behind c */
    ck_assert_uint_eq(loop_scheduled_len(loop), 2);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 1);
    ck_assert_str_eq(ran, "");
    run_all(loop);
    ck_assert_str_eq(ran, "c");
    ck_assert_uint_eq(loop_scheduled_len(loop), 0);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 0);
    finish(loop);
}
END_TEST

START_TEST(a_due_cancelled_timer_keeps_the_count)
{
    /* a and b share a deadline, b cancelled.  a is at the head, so step 1
     * pops nothing; step 3 moves both to the ready deque, which skips b.
     * The count still says 1 with an empty heap: CPython's
     * _timer_cancelled_count does the same (it is only reset by a rebuild). */
    loop_t *loop = virtual_loop();
    loop_call_at(loop, 1, note, "a");
    handle_t *b = loop_call_at(loop, 1, note, "b");
    handle_cancel(b);
    run_all(loop);
    ck_assert_str_eq(ran, "a");
    ck_assert_uint_eq(loop_scheduled_len(loop), 0);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 1);
    finish(loop);
}
END_TEST

/* n timers at 10 + i (the head, at 10, stays live); cancel the last c of
 * them; run one tick; what is left? */
static void threshold(loop_rules rules, int n, int c, size_t len, size_t count)
{
    loop_t *loop = virtual_loop();
    loop_set_rules(loop, rules);
    handle_t **h = calloc((size_t)n, sizeof *h);
    ck_assert_ptr_nonnull(h);
    for (int i = 0; i < n; i++)
        h[i] = loop_call_at(loop, 10 + i, note, "x");
    for (int i = n - c; i < n; i++)
        handle_cancel(h[i]);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), (size_t)c);
    one_tick(loop);
    ck_assert_uint_eq(loop_scheduled_len(loop), len);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), count);
    free(h);
    finish(loop);
}

START_TEST(rebuild_when_more_than_100_and_more_than_half)
{
    threshold(LOOP_RULES_ASYNCIO, 101, 51, 50, 0);  /* rebuilt */
    threshold(LOOP_RULES_ASYNCIO, 150, 120, 30, 0); /* rebuilt */
    threshold(LOOP_RULES_ASYNCIO, 101, 50, 101, 50); /* 50/101: not half */
    threshold(LOOP_RULES_ASYNCIO, 102, 51, 102, 51); /* exactly half */
    threshold(LOOP_RULES_ASYNCIO, 100, 99, 100, 99); /* 100 is not more than 100 */
    threshold(LOOP_RULES_NO_REBUILD, 150, 120, 150, 120);
}
END_TEST

/* CPython 3.11: 110 `call_at(1, ...)`, then k cancelled for every k not a
 * multiple of 3 (73 of 110): the first tick rebuilds the heap, and the 37
 * survivors fire in this order (tests/conformance: the trace of the same
 * scenario).  Without the rebuild the order would start "0 6 30 108". */
static const char rebuilt_order[] =
    "90 42 18 6 0 51 105 21 99 45 87 93 39 81 15 75 33 69 3 63 27 57 9 108 48 84 "
    "96 36 72 12 60 24 78 102 30 66 54";

START_TEST(rebuild_keeps_cpythons_tie_order)
{
    loop_t *loop = virtual_loop();
    static char names[110][12];
    handle_t *h[110];
    for (int k = 0; k < 110; k++) {
        snprintf(names[k], sizeof names[k], "%d", k);
        h[k] = loop_call_at(loop, 1, note, names[k]);
    }
    for (int k = 0; k < 110; k++)
        if (k % 3 != 0)
            handle_cancel(h[k]);
    run_all(loop);
    ck_assert_str_eq(ran, rebuilt_order);
    finish(loop);
}
END_TEST

START_TEST(cancelled_handles_in_ready_are_skipped)
{
    loop_t *loop = virtual_loop();
    act_t a = {.name = "a"};
    loop_call_soon(loop, cancel_target, &a);
    loop_call_soon(loop, note, "b");
    a.target = loop_call_soon(loop, note, "c");
    loop_call_soon(loop, note, "d");
    one_tick(loop);
    ck_assert_str_eq(ran, "a b d");
    finish(loop);
}
END_TEST

static Suite *cancel_suite(void)
{
    Suite *s = suite_create("cancel");
    TCase *own = tcase_create("ownership");
    tcase_add_test(own, cancel_before_it_runs);
    tcase_add_test(own, cancel_after_it_ran_needs_a_kept_handle);
    tcase_add_test(own, cancel_twice);
    tcase_add_test(own, cancel_itself_from_its_callback);
    tcase_add_test(own, retain_from_its_callback);
    tcase_add_test(own, cancel_another_in_the_same_tick);
    tcase_add_test(own, cancel_a_later_timer_from_a_callback);
    tcase_add_test(own, kept_handles_outlive_the_loop);
    tcase_add_test(own, release_does_not_cancel);
    tcase_add_test(own, null_handle_is_not_a_crash);
    suite_add_tcase(s, own);
    TCase *acc = tcase_create("accounting");
    tcase_add_test(acc, count_rises_once_and_only_for_scheduled_timers);
    tcase_add_test(acc, cancelled_timers_at_the_head_are_popped);
    tcase_add_test(acc, a_due_cancelled_timer_keeps_the_count);
    tcase_add_test(acc, rebuild_when_more_than_100_and_more_than_half);
    tcase_add_test(acc, rebuild_keeps_cpythons_tie_order);
    tcase_add_test(acc, cancelled_handles_in_ready_are_skipped);
    suite_add_tcase(s, acc);
    return s;
}

int main(void)
{
    return run_suite(cancel_suite());
}
