/* Exercise 4 of chapter 05: one planted bug.
 *
 * code/05-lazy-cancel/exercises/4-one-bug/loop.c is the stage's loop.c with
 * one bug in step 1 of run_once (the lazy cleanup).  This test passes when
 * the cancelled-timer count keeps telling the truth: a cancelled timer
 * dropped at the head of the heap is no longer counted, so the count never
 * drifts up, and the heap is rebuilt only when MORE than half of the timers
 * it really holds are cancelled.
 *
 *   make exercise CH=05            (against your code/05-lazy-cancel/exercises/)
 *   make exercise CH=05 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <stdlib.h>

#include "check_main.h"

static void nop(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

/* One tick that runs nothing: the timers are at 10 s and later, and a stop
 * requested before the run makes the poll only look. */
static void one_tick(loop_t *loop)
{
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

START_TEST(a_cancelled_head_is_no_longer_counted)
{
    loop_t *loop = loop_new_virtual();
    ck_assert_ptr_nonnull(loop);
    handle_t *first = loop_call_at(loop, 10, nop, NULL);
    loop_call_at(loop, 11, nop, NULL);
    loop_call_at(loop, 12, nop, NULL);
    handle_cancel(first);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 1);
    one_tick(loop); /* step 1 drops the cancelled head */
    ck_assert_uint_eq(loop_scheduled_len(loop), 2);
    ck_assert_msg(loop_timer_cancelled_count(loop) == 0,
                  "the heap holds no cancelled timer, but the count is %zu",
                  loop_timer_cancelled_count(loop));
    loop_close(loop);
    loop_free(loop);
}
END_TEST

/* 200 timers.  67 times: cancel the nearest one, and tick (step 1 drops it
 * at the head).  Then cancel one in the middle, and tick.  The heap holds 133
 * timers, 1 of them cancelled: no rebuild, all 133 stay.  A count that
 * drifted up by one at each head would say 68 of 133 -- more than half --
 * and rebuild the heap down to 132. */
START_TEST(no_rebuild_on_a_count_that_drifted)
{
    enum { N = 200, HEADS = 67 };
    loop_t *loop = loop_new_virtual();
    ck_assert_ptr_nonnull(loop);
    handle_t **h = calloc(N, sizeof *h);
    ck_assert_ptr_nonnull(h);
    for (int i = 0; i < N; i++) {
        h[i] = loop_call_at(loop, 10 + i, nop, NULL);
        handle_retain(h[i]);
    }
    for (int i = 0; i < HEADS; i++) {
        handle_cancel(h[i]);
        one_tick(loop);
    }
    handle_cancel(h[N / 2]);
    one_tick(loop);
    ck_assert_msg(loop_scheduled_len(loop) == N - HEADS,
                  "%zu timers left in the heap, not %d: it was rebuilt, with 1 "
                  "cancelled timer in %d", loop_scheduled_len(loop), N - HEADS, N - HEADS);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 1);
    for (int i = 0; i < N; i++)
        handle_release(h[i]);
    free(h);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("4-one-bug");
    TCase *tc = tcase_create("one-bug");
    tcase_add_test(tc, a_cancelled_head_is_no_longer_counted);
    tcase_add_test(tc, no_rebuild_on_a_count_that_drifted);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
