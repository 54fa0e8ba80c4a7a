/* Exercise 2 (chapter 06): loop_call_later_threadsafe.
 *
 * Another thread schedules three timers on a running loop, out of order;
 * they must run on the loop's thread, in deadline order, about when they
 * are due.  A NaN delay and a NULL callback are refused on the calling
 * thread; a closed loop refuses too, and nothing leaks (run it under ASan
 * or valgrind).
 *
 * The delay counts from when the loop's thread receives the request, not
 * from the call: loop_call_later() called on the calling thread (a data
 * race loop.h forbids, with a wake-up sent after it) passes the first test,
 * so the second sends a request while the loop is busy in a callback for
 * 0.3 s, and wants it run 0.1 s after that callback, not at once.
 */
#define _POSIX_C_SOURCE 200809L
#include "later_threadsafe.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"

static pthread_t loop_thread;
static char order[16];
static int on_loop_thread = 1;
static double t0;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    size_t n = strlen(order);
    order[n] = *(const char *)arg;
    order[n + 1] = '\0';
    if (!pthread_equal(pthread_self(), loop_thread))
        on_loop_thread = 0;
}

static void last(loop_t *loop, void *arg)
{
    note(loop, arg);
    ck_assert_double_gt(now() - t0, 0.25); /* not before it was due */
    loop_stop(loop);
}

static void *from_worker(void *arg)
{
    loop_t *loop = arg;
    ck_assert_int_eq(loop_call_later_threadsafe(loop, 0.2, note, "b"), 0);
    ck_assert_int_eq(loop_call_later_threadsafe(loop, 0.3, last, "c"), 0);
    ck_assert_int_eq(loop_call_later_threadsafe(loop, 0.1, note, "a"), 0);
    errno = 0;
    ck_assert_int_eq(loop_call_later_threadsafe(loop, NAN, note, "x"), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(loop_call_later_threadsafe(loop, 0.1, NULL, "x"), -1);
    return NULL;
}

static void never(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

START_TEST(later_from_another_thread)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_ptr_nonnull(loop_call_later(loop, 86400, never, NULL)); /* asleep */
    loop_thread = pthread_self();
    order[0] = '\0';
    t0 = now();
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, from_worker, loop), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_str_eq(order, "abc");
    ck_assert_int_eq(on_loop_thread, 1);
    ck_assert_int_eq(loop_close(loop), 0);
    errno = 0;
    ck_assert_int_eq(loop_call_later_threadsafe(loop, 0.1, note, "x"), -1);
    ck_assert_int_eq(errno, EINVAL);
    loop_free(loop);
}
END_TEST

/* The loop is busy: a callback that holds it for 0.3 s, during which
 * another thread sends a timer of 0.1 s. */
static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t busy_cond = PTHREAD_COND_INITIALIZER;
static int busy_started, sent;
static double busy_ended, fired_at;

static void fired(loop_t *loop, void *arg)
{
    (void)arg;
    fired_at = now();
    loop_stop(loop);
}

static void busy(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    pthread_mutex_lock(&busy_lock);
    busy_started = 1;
    pthread_cond_broadcast(&busy_cond);
    while (!sent)
        pthread_cond_wait(&busy_cond, &busy_lock);
    pthread_mutex_unlock(&busy_lock);
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    busy_ended = now();
}

static void *send_while_busy(void *arg)
{
    pthread_mutex_lock(&busy_lock);
    while (!busy_started)
        pthread_cond_wait(&busy_cond, &busy_lock);
    pthread_mutex_unlock(&busy_lock);
    int rc = loop_call_later_threadsafe(arg, 0.1, fired, NULL);
    pthread_mutex_lock(&busy_lock);
    sent = rc == 0 ? 1 : -1;
    pthread_cond_broadcast(&busy_cond);
    pthread_mutex_unlock(&busy_lock);
    return NULL;
}

START_TEST(the_delay_starts_on_the_loops_thread)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_ptr_nonnull(loop_call_later(loop, 2.0, fired, NULL)); /* in case it never comes */
    busy_started = sent = 0;
    fired_at = 0;
    ck_assert_ptr_nonnull(loop_call_soon(loop, busy, NULL));
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, send_while_busy, loop), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_int_eq(sent, 1);
    ck_assert_msg(fired_at - busy_ended < 1.0, "a timer of 0.1 s sent while the loop was busy "
                  "did not run within 1 s");
    ck_assert_msg(fired_at - busy_ended > 0.09,
                  "a timer of 0.1 s sent while the loop was busy ran %.3f s after the "
                  "loop was free: its delay must start when the loop's thread receives "
                  "the request (loop_call_later() belongs to the loop's thread)",
                  fired_at - busy_ended);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("2-later-threadsafe");
    TCase *tc = tcase_create("later");
    tcase_add_test(tc, later_from_another_thread);
    tcase_add_test(tc, the_delay_starts_on_the_loops_thread);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
