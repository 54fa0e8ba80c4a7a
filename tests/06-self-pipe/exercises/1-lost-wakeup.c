/* Exercise 1 (chapter 06): the lost wake-up of coalescing.
 *
 * A coalescing loop writes to its self-pipe only while it "may be asleep".
 * The test stands in the window between the loop's look at the ready deque
 * and its poll: its wait hook (which runs right there, on the loop's
 * thread) has another thread call loop_call_soon_threadsafe() and waits for
 * it.  The loop has a timer 1 s away, so it means to sleep 1 s; the call
 * must wake it at once.
 *
 * The window begins right after the look, not at the wait hook: a flag
 * raised anywhere between the two is as late.  So the second test makes the
 * same call from the look hook (loop_set_look_hook(), for tests only),
 * which the loop calls the moment its look at the ready deque ends.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "check_main.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double woke_at;
static int hooked;

static void note_wake(loop_t *loop, void *arg)
{
    (void)arg;
    woke_at = now();
    loop_stop(loop);
}

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

static void *call_once(void *arg)
{
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(arg, note_wake, NULL));
    return NULL;
}

static double call_in_the_window(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (!hooked++) {
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, call_once, loop), 0);
        ck_assert_int_eq(pthread_join(th, NULL), 0);
    }
    return timeout;
}

/* The same call, made the moment the look at the ready deque ends. */
static void call_right_after_the_look(loop_t *loop, size_t queued, void *ctx)
{
    (void)ctx;
    if (queued == 0 && !hooked++) {
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, call_once, loop), 0);
        ck_assert_int_eq(pthread_join(th, NULL), 0);
    }
}

/* _i: 0 or 1 the wake-up (pipe, eventfd); 0-1 call from the wait hook,
 * 2-3 from the look hook. */
START_TEST(a_call_in_the_window_wakes_the_loop)
{
    loop_wakeup how = _i % 2 ? LOOP_WAKEUP_EVENTFD : LOOP_WAKEUP_PIPE;
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_int_eq(loop_set_wakeup(loop, how, 1), 0);
    ck_assert_ptr_nonnull(loop_call_later(loop, 1.0, stop_cb, NULL));
    if (_i < 2)
        loop_set_wait_hook(loop, call_in_the_window, NULL);
    else
        loop_set_look_hook(loop, call_right_after_the_look, NULL);
    hooked = 0;
    woke_at = 0;
    double t0 = now();
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(woke_at > 0 && woke_at - t0 < 0.5,
                  "a call made between the look at the ready deque and the poll "
                  "waited for the 1 s timer: the wake-up was lost (the flag `polling` "
                  "was raised too late)");
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("1-lost-wakeup");
    TCase *tc = tcase_create("window");
    tcase_add_loop_test(tc, a_call_in_the_window_wakes_the_loop, 0, 4);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
