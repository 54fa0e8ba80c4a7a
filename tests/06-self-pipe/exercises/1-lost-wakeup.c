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
 *
 * Waking it is not the whole answer: a loop that writes on every call
 * (coalescing switched off, or `polling` always true) wakes too.  The third
 * test counts the writes another thread makes (the test's write() stands
 * in front of the C library's): calls made while the loop is not asleep,
 * or after a byte is already on its way, must write nothing.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "loop.h"

#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <time.h>

#include "check_main.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This write() stands in front of the C library's (a definition in the
 * program comes first): it counts the writes of the thread that raised
 * `sending`, whichever function of loop.c makes them. */
static _Thread_local int sending;
static int writes;

typedef ssize_t write_fn(int, const void *, size_t);

ssize_t write(int fd, const void *buf, size_t count)
{
    static write_fn *real;
    if (real == NULL)
        real = (write_fn *)dlsym(RTLD_NEXT, "write");
    if (sending)
        __atomic_fetch_add(&writes, 1, __ATOMIC_RELAXED);
    return real(fd, buf, count);
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
    ck_assert_msg(woke_at > 0 && woke_at - t0 < 0.9, /* slack for valgrind on a busy machine */
                  "a call made between the look at the ready deque and the poll "
                  "waited for the 1 s timer: the wake-up was lost (the flag `polling` "
                  "was raised too late)");
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

/* Another thread makes `n` calls (each stops the loop: the tick that runs
 * them is its last) and counts its writes. */
typedef struct burst {
    loop_t *loop;
    int n, failed;
} burst_t;

static void *burst_of_calls(void *arg)
{
    burst_t *b = arg;
    sending = 1;
    for (int i = 0; i < b->n; i++)
        if (loop_call_soon_threadsafe(b->loop, stop_cb, NULL) == NULL)
            b->failed++;
    sending = 0;
    return NULL;
}

static int burst(loop_t *loop, int n)
{
    burst_t b = {loop, n, 0};
    pthread_t th;
    writes = 0;
    ck_assert_int_eq(pthread_create(&th, NULL, burst_of_calls, &b), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_int_eq(b.failed, 0);
    return __atomic_load_n(&writes, __ATOMIC_RELAXED);
}

/* From the wait hook (the loop is about to sleep): the first call writes,
 * the 99 after it find a byte on its way. */
static int window_writes;
static double burst_in_the_window(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (!hooked++)
        window_writes = burst(loop, 100);
    return timeout;
}

START_TEST(coalescing_still_coalesces)
{
    loop_wakeup how = _i % 2 ? LOOP_WAKEUP_EVENTFD : LOOP_WAKEUP_PIPE;
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_int_eq(loop_set_wakeup(loop, how, 1), 0);
    int idle = burst(loop, 100); /* the loop is not running: nobody to wake */
    ck_assert_msg(idle == 0,
                  "100 calls while the loop was not asleep wrote %d times to the self-pipe: "
                  "coalescing writes only while the loop may be asleep in its poll", idle);
    ck_assert_int_eq(loop_run_forever(loop), 0); /* runs the 100, then stops */
    hooked = 0;
    window_writes = -1;
    loop_set_wait_hook(loop, burst_in_the_window, NULL);
    double t0 = now();
    ck_assert_ptr_nonnull(loop_call_later(loop, 1.0, stop_cb, NULL)); /* it means to sleep 1 s */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(window_writes == 1,
                  "100 calls while the loop was about to sleep wrote %d times: one byte "
                  "wakes it, the others must find it on its way", window_writes);
    ck_assert_msg(now() - t0 < 0.9, "the calls in the window did not wake the loop");
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("1-lost-wakeup");
    TCase *tc = tcase_create("window");
    tcase_add_loop_test(tc, a_call_in_the_window_wakes_the_loop, 0, 4);
    tcase_add_loop_test(tc, coalescing_still_coalesces, 0, 2);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
