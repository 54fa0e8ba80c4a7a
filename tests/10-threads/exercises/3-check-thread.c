/* Exercise 3 (chapter 10): debug mode's thread check.
 *
 * Write check_thread() in loop.c, which loop_call_soon(), loop_call_later()
 * and loop_call_at() call before they touch the loop, as
 * base_events._check_thread does it in 3.11:
 *     if self._thread_id is None:
 *         return
 *     thread_id = threading.get_ident()
 *     if thread_id != self._thread_id:
 *         raise RuntimeError(
 *             "Non-thread-safe operation invoked on an event loop other "
 *             "than the current one")
 *   - only in debug mode (call_soon tests self._debug before it calls it);
 *   - a loop that does not run has no thread: anyone may schedule on it;
 *   - a loop that runs belongs to the thread that runs it: any other is
 *     refused (NULL, errno EPERM, that message in loop_error());
 *   - loop_call_soon_threadsafe() is never refused: that is what it is for.
 * The loop runs in a thread of its own; the test's thread is the other one.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "handler.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check_main.h"

#define MESSAGE "Non-thread-safe operation invoked on an event loop other than the current one"

/* ---------------------------------------------- a loop in its thread */
static loop_t *loop;
static pthread_t loop_thread;

static void *run_loop(void *arg)
{
    (void)arg;
    loop_run_forever(loop);
    return NULL;
}

/* A callback that holds the loop's thread until the test opens the gate:
 * while it waits, the loop is running, and the test's thread may call in. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open, gate_entered;

static void gate(loop_t *l, void *arg)
{
    (void)l;
    (void)arg;
    pthread_mutex_lock(&gate_lock);
    gate_entered = 1;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

/* A new loop, running in its thread, held in gate(). */
static void start_held(int debug)
{
    loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    loop_set_debug(loop, debug);
    gate_open = gate_entered = 0;
    ck_assert_ptr_nonnull(loop_call_soon(loop, gate, NULL)); /* not running yet: allowed */
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, run_loop, NULL), 0);
    pthread_mutex_lock(&gate_lock);
    while (!gate_entered)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    ck_assert_int_eq(loop_is_running(loop), 1);
}

static void open_gate(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

static void stop(loop_t *l, void *arg)
{
    (void)arg;
    loop_stop(l);
}

static void join_and_free(void)
{
    ck_assert_int_eq(pthread_join(loop_thread, NULL), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    loop = NULL;
}

static atomic_int ran;
static void count(loop_t *l, void *arg)
{
    (void)l;
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

/* ------------------------------------------------------------ tests */

/* The loop's own callbacks schedule freely, in debug mode too. */
static int own_calls;
static void schedule_from_inside(loop_t *l, void *arg)
{
    (void)arg;
    own_calls += loop_call_soon(l, count, NULL) != NULL;
    own_calls += loop_call_later(l, 0.001, count, NULL) != NULL;
    own_calls += loop_call_at(l, loop_time(l) + 0.002, count, NULL) != NULL;
    loop_call_later(l, 0.05, stop, NULL);
}

START_TEST(the_loops_own_thread_may_schedule)
{
    start_held(1);
    atomic_store(&ran, 0);
    own_calls = 0;
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, schedule_from_inside, NULL));
    open_gate();
    join_and_free();
    ck_assert_int_eq(own_calls, 3);
    ck_assert_int_eq(atomic_load(&ran), 3);
}
END_TEST

START_TEST(another_thread_is_refused_while_it_runs)
{
    start_held(1);
    atomic_store(&ran, 0);
    errno = 0;
    ck_assert_ptr_null(loop_call_soon(loop, count, NULL));
    ck_assert_int_eq(errno, EPERM);
    errno = 0;
    ck_assert_ptr_null(loop_call_later(loop, 0.001, count, NULL));
    ck_assert_int_eq(errno, EPERM);
    errno = 0;
    ck_assert_ptr_null(loop_call_at(loop, 0.0, count, NULL));
    ck_assert_int_eq(errno, EPERM);
    /* Nothing was scheduled by the refused calls; this one is allowed. */
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, count, NULL));
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, stop, NULL));
    open_gate();
    ck_assert_int_eq(pthread_join(loop_thread, NULL), 0);
    ck_assert_str_eq(loop_error(loop), MESSAGE);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    loop = NULL;
    ck_assert_int_eq(atomic_load(&ran), 1);
}
END_TEST

START_TEST(a_loop_that_does_not_run_has_no_thread)
{
    loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    loop_set_debug(loop, 1);
    atomic_store(&ran, 0);
    /* Made and scheduled on by this thread, run by another, then, once that
     * run is over, scheduled on by this thread again. */
    ck_assert_ptr_nonnull(loop_call_soon(loop, count, NULL));
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.001, count, NULL));
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.01, stop, NULL));
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, run_loop, NULL), 0);
    ck_assert_int_eq(pthread_join(loop_thread, NULL), 0);
    ck_assert_int_eq(atomic_load(&ran), 2);
    ck_assert_ptr_nonnull(loop_call_soon(loop, count, NULL));
    ck_assert_ptr_nonnull(loop_call_at(loop, loop_time(loop), stop, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0); /* this thread runs it now */
    ck_assert_int_eq(atomic_load(&ran), 3);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    loop = NULL;
}
END_TEST

START_TEST(without_debug_mode_nothing_is_checked)
{
    /* The loop's thread waits in gate(), so this thread's call_soon is
     * ordered with everything the loop does (the gate's mutex): no race,
     * just a call that debug mode would refuse. */
    start_held(0);
    atomic_store(&ran, 0);
    ck_assert_ptr_nonnull(loop_call_soon(loop, count, NULL));
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.001, count, NULL));
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.01, stop, NULL));
    open_gate();
    join_and_free();
    ck_assert_int_eq(atomic_load(&ran), 2);
}
END_TEST

START_TEST(debug_mode_turned_on_while_it_runs)
{
    start_held(0);
    atomic_store(&ran, 0);
    ck_assert_ptr_nonnull(loop_call_soon(loop, count, NULL));
    loop_set_debug(loop, 1); /* ordered by the gate, as above */
    errno = 0;
    ck_assert_ptr_null(loop_call_soon(loop, count, NULL));
    ck_assert_int_eq(errno, EPERM);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, stop, NULL));
    open_gate();
    join_and_free();
    ck_assert_int_eq(atomic_load(&ran), 1);
}
END_TEST

static Suite *check_thread_suite(void)
{
    Suite *s = suite_create("exercise 3: the thread check");
    TCase *tc = tcase_create("check_thread");
    tcase_add_test(tc, the_loops_own_thread_may_schedule);
    tcase_add_test(tc, another_thread_is_refused_while_it_runs);
    tcase_add_test(tc, a_loop_that_does_not_run_has_no_thread);
    tcase_add_test(tc, without_debug_mode_nothing_is_checked);
    tcase_add_test(tc, debug_mode_turned_on_while_it_runs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(check_thread_suite());
}
