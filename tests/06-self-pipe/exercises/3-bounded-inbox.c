/* Exercise 3 (chapter 06): a bounded inbox, back-pressure for threads.
 *
 * With a limit of 4, a thread's first 4 calls are queued and the 5th and
 * 6th refused with EAGAIN while the loop is not running; one tick takes the
 * 4 out (and runs them, in order); then 4 more fit.  The loop's own
 * call_soon is not limited.  A stress run with a limit of 64: senders that
 * retry on EAGAIN lose nothing.
 *
 * The limit counts the handles still in the deque, not the calls since the
 * loop last looked at it: a count set back to 0 when a tick starts passes
 * the first two tests, so the third calls in the middle of a tick, when
 * three of the four are still waiting for their turn: one more fits.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check_main.h"

static long ran, last = -1;
static int out_of_order;

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    long v = (long)(intptr_t)arg;
    if (v <= last)
        out_of_order++;
    last = v;
    ran++;
}

typedef struct calls {
    loop_t *loop;
    long from, n, accepted, refused;
} calls_t;

static void *make_calls(void *arg)
{
    calls_t *c = arg;
    for (long i = c->from; i < c->from + c->n; i++) {
        errno = 0;
        if (loop_call_soon_threadsafe(c->loop, note, (void *)(intptr_t)i) != NULL) {
            c->accepted++;
        } else {
            ck_assert_int_eq(errno, EAGAIN);
            c->refused++;
        }
    }
    return NULL;
}

static void run_calls(calls_t *c)
{
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, make_calls, c), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
}

START_TEST(limit_refuses_then_frees_up)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_int_eq(loop_set_threadsafe_limit(loop, 4), 0);
    ran = 0;
    last = -1;
    calls_t c = {loop, 0, 6, 0, 0};
    run_calls(&c);
    ck_assert_int_eq(c.accepted, 4);
    ck_assert_int_eq(c.refused, 2);
    for (int i = 0; i < 3; i++) /* the loop's own calls do not count */
        ck_assert_ptr_nonnull(loop_call_soon(loop, note, (void *)(intptr_t)(100 + i)));
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0); /* one tick */
    ck_assert_int_eq(ran, 7);
    calls_t d = {loop, 200, 5, 0, 0};
    run_calls(&d);
    ck_assert_int_eq(d.accepted, 4);
    ck_assert_int_eq(d.refused, 1);
    ck_assert_int_eq(out_of_order, 0);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

/* The first of four queued handles: while it runs, the other three are
 * still in the deque, so another thread may queue one, not four. */
static calls_t mid;
static void call_mid_tick(loop_t *loop, void *arg)
{
    note(loop, arg);
    mid = (calls_t){loop, 300, 4, 0, 0};
    run_calls(&mid);
}

START_TEST(the_limit_counts_what_is_still_queued)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_int_eq(loop_set_threadsafe_limit(loop, 4), 0);
    ran = 0;
    last = -1;
    out_of_order = 0;
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, call_mid_tick, (void *)(intptr_t)0));
    calls_t c = {loop, 1, 3, 0, 0};
    run_calls(&c);
    ck_assert_int_eq(c.accepted, 3);
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0); /* one tick: the four */
    ck_assert_int_eq(ran, 4);
    ck_assert_msg(mid.accepted == 1 && mid.refused == 3,
                  "with a limit of 4, 4 calls made while 3 threadsafe handles were still "
                  "queued: %ld accepted, %ld refused (expected 1 and 3: the limit counts "
                  "the handles in the deque)", mid.accepted, mid.refused);
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0); /* the one that fitted */
    ck_assert_int_eq(ran, 5);
    ck_assert_int_eq(out_of_order, 0);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

#define SENDERS 4
#define CALLS 20000
static long total;

static void count(loop_t *loop, void *arg)
{
    (void)arg;
    if (++total == (long)SENDERS * CALLS)
        loop_stop(loop);
}

static void *send_retrying(void *arg)
{
    for (int i = 0; i < CALLS; i++) {
        while (loop_call_soon_threadsafe(arg, count, NULL) == NULL) {
            ck_assert_int_eq(errno, EAGAIN);
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL); /* full: let the loop catch up */
        }
    }
    return NULL;
}

START_TEST(senders_that_retry_lose_nothing)
{
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_threadsafe_limit(loop, 64), 0);
    total = 0;
    pthread_t th[SENDERS];
    for (int i = 0; i < SENDERS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, send_retrying, loop), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    for (int i = 0; i < SENDERS; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    ck_assert_int_eq(total, (long)SENDERS * CALLS);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("3-bounded-inbox");
    TCase *tc = tcase_create("inbox");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, limit_refuses_then_frees_up);
    tcase_add_test(tc, senders_that_retry_lose_nothing);
    tcase_add_test(tc, the_limit_counts_what_is_still_queued);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
