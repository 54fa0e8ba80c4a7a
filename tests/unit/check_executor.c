/* check_executor.c -- threads meet tasks (chapter 10): the concurrent
 * future, the thread pool, run_in_executor, run_coroutine_threadsafe.
 *
 * Written against chapter 10's executor.h and run against every later
 * stage.  Each rule was checked against CPython 3.11.2 running the same
 * program (/usr/bin/python3): the Python twin of each test is quoted above
 * it, with what it printed.  One test per rule:
 *   - cfuture (concurrent.futures.Future): every state transition of
 *     _base.Future, result()/exception() with a timeout (TimeoutError, the
 *     future untouched), done callbacks (their order, at once when done, in
 *     the completing thread), a second set refused;
 *   - executor (ThreadPoolExecutor): results, errors, FIFO with one worker,
 *     threads started lazily, max_workers, cancelling a queued job and a
 *     running one, shutdown with jobs queued (wait, cancel_futures), submit
 *     after shutdown, executor_free with jobs queued;
 *   - the bridge: run_in_executor's result and error awaited by a task, the
 *     default executor (made on first use, named asyncio_N), its
 *     replacement, cancelling the loop's future cancels a job not started
 *     (and not one that runs), wrap_future both ways,
 *     shutdown_default_executor (the loop runs on while it waits), a closed
 *     loop, a loop closed (and freed) while its jobs run;
 *   - run_coroutine_threadsafe from another thread: result, error, timeout,
 *     cancel (the coroutine sees CancelledError), a loop closed before the
 *     callback ran (the waiter does not hang);
 *   - debug mode's thread check (call_soon from another thread);
 *   - out of memory in executor_submit, loop_run_in_executor and
 *     loop_run_coroutine_threadsafe: refused cleanly, nothing accepted lost.
 *
 * Threads are made deterministic with a gate: a job that blocks until the
 * test opens it holds a worker in a known state, so that "queued" and
 * "running" mean what they say when the test acts.  No test sleeps to
 * order events, except where a timeout itself is the rule under test.
 *
 * OOM: tests/support/failalloc.h, whose count is per thread: it fails
 * only in the thread that armed it, so a worker's allocations never fail
 * by accident.  It needs the link flags
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (executor_LDFLAGS in
 * tests/suites.mk).
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/10-threads -I tests/support tests/unit/check_executor.c \
 *      build/10-threads/libloop.a -Wl,--wrap=malloc -Wl,--wrap=calloc \
 *      -Wl,--wrap=realloc $(pkg-config --cflags --libs check) -lpthread
 */
#define _GNU_SOURCE /* pthread_getname_np */
#include "executor.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"

/* ---- allocation failure ----------------------------------------------------- */

/* tests/support/failalloc.h: its count is per thread, so arming it here
 * fails the Nth allocation of this thread only, never one of a pool
 * worker's or of the loop's thread (which would make the refusal land
 * somewhere the test does not look). */
#include "failalloc.h"

/* ---- time, the gate, the jobs ---------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The gate: gated jobs wait at it until the test opens it; the test can
 * wait until N of them are waiting (they run: the worker is taken). */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_is_open;
static int gate_waiting;

/* What the jobs did, per job id: how many times each ran, in which order,
 * and the name of the thread each ran in. */
#define MAX_JOBS 4096
static atomic_int runs[MAX_JOBS];
static int order[MAX_JOBS];
static int norder;
static char thread_names[MAX_JOBS][16];

static void reset(void)
{
    pthread_mutex_lock(&gate_mu);
    gate_is_open = 0;
    gate_waiting = 0;
    norder = 0;
    pthread_mutex_unlock(&gate_mu);
    for (int i = 0; i < MAX_JOBS; i++)
        atomic_store(&runs[i], 0);
}

static void gate_open(void)
{
    pthread_mutex_lock(&gate_mu);
    gate_is_open = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

/* Wait (at most 5 s) until n jobs wait at the gate. */
static void gate_await_waiters(int n)
{
    double deadline = now() + 5.0;
    pthread_mutex_lock(&gate_mu);
    while (gate_waiting < n && now() < deadline) {
        pthread_mutex_unlock(&gate_mu);
        sleep_ms(1);
        pthread_mutex_lock(&gate_mu);
    }
    int waiting = gate_waiting;
    pthread_mutex_unlock(&gate_mu);
    ck_assert_int_ge(waiting, n);
}

static int gate_waiters(void)
{
    pthread_mutex_lock(&gate_mu);
    int n = gate_waiting;
    pthread_mutex_unlock(&gate_mu);
    return n;
}

/* Record that job `id` ran, in this thread. */
static void record(int id)
{
    atomic_fetch_add(&runs[id], 1);
    pthread_mutex_lock(&gate_mu);
    order[norder++] = id;
    pthread_getname_np(pthread_self(), thread_names[id], sizeof thread_names[id]);
    pthread_mutex_unlock(&gate_mu);
}

static int ran(int id)
{
    return atomic_load(&runs[id]);
}

/* def job(i): record(i); return i */
static int job_value(void *arg, void **result, loop_exception_t *error)
{
    (void)error;
    record((int)(intptr_t)arg);
    *result = arg;
    return 0;
}

/* def bad(): raise ValueError("job failed") */
static int job_fail(void *arg, void **result, loop_exception_t *error)
{
    (void)result;
    record((int)(intptr_t)arg);
    snprintf(error->type, sizeof error->type, "ValueError");
    snprintf(error->message, sizeof error->message, "job failed");
    return -1;
}

/* def gated(i): gate.wait(); record(i); return i */
static int job_gated(void *arg, void **result, loop_exception_t *error)
{
    (void)error;
    pthread_mutex_lock(&gate_mu);
    gate_waiting++;
    pthread_cond_broadcast(&gate_cv);
    while (!gate_is_open)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    record((int)(intptr_t)arg);
    *result = arg;
    return 0;
}

#define ID(i) ((void *)(intptr_t)(i))

/* The result of a cfuture as one string: "result=7", "ValueError: job failed". */
static const char *cf_outcome(cfuture_t *f, double timeout)
{
    static char buf[300];
    void *value = NULL;
    loop_exception_t e;
    memset(&e, 0, sizeof e);
    if (cfuture_result(f, timeout, &value, &e) == 0)
        snprintf(buf, sizeof buf, "result=%d", (int)(intptr_t)value);
    else
        snprintf(buf, sizeof buf, "%s: %s", e.type, e.message);
    return buf;
}

/* ================================================================ cfuture */

/* f = Future(); f.cancel(), f._state; f.cancel() again
 *     -> True CANCELLED / True CANCELLED */
START_TEST(cfuture_cancel_pending_is_cancelled)
{
    cfuture_t *f = cfuture_new();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_PENDING);
    ck_assert(!cfuture_done(f) && !cfuture_cancelled(f) && !cfuture_running(f));
    ck_assert_int_eq(cfuture_cancel(f), 1);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_CANCELLED);
    ck_assert(cfuture_done(f) && cfuture_cancelled(f));
    ck_assert_int_eq(cfuture_cancel(f), 1);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_CANCELLED);
    cfuture_release(f);
}
END_TEST

/* f.set_running_or_notify_cancel() -> True RUNNING; f.cancel() -> False RUNNING */
START_TEST(cfuture_cancel_running_is_refused)
{
    cfuture_t *f = cfuture_new();
    ck_assert_int_eq(cfuture_set_running_or_notify_cancel(f), 1);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_RUNNING);
    ck_assert(cfuture_running(f) && !cfuture_done(f));
    ck_assert_int_eq(cfuture_cancel(f), 0);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_RUNNING);
    ck_assert_int_eq(cfuture_set_result(f, ID(7)), 0);
    ck_assert_str_eq(cf_outcome(f, -1), "result=7");
    cfuture_release(f);
}
END_TEST

/* f.set_result(7); f.cancel() -> False FINISHED */
START_TEST(cfuture_cancel_finished_is_refused)
{
    cfuture_t *f = cfuture_new();
    ck_assert_int_eq(cfuture_set_result(f, ID(7)), 0);
    ck_assert_int_eq(cfuture_cancel(f), 0);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_FINISHED);
    ck_assert(cfuture_done(f) && !cfuture_cancelled(f));
    ck_assert_str_eq(cf_outcome(f, 0), "result=7");
    cfuture_release(f);
}
END_TEST

/* f.cancel(); f.set_running_or_notify_cancel() -> False CANCELLED_AND_NOTIFIED;
 * f.cancel() -> True CANCELLED_AND_NOTIFIED */
START_TEST(cfuture_set_running_on_cancelled_notifies)
{
    cfuture_t *f = cfuture_new();
    ck_assert_int_eq(cfuture_cancel(f), 1);
    ck_assert_int_eq(cfuture_set_running_or_notify_cancel(f), 0);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_CANCELLED_AND_NOTIFIED);
    ck_assert(cfuture_cancelled(f) && cfuture_done(f));
    ck_assert_int_eq(cfuture_cancel(f), 1);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_CANCELLED_AND_NOTIFIED);
    cfuture_release(f);
}
END_TEST

/* f.set_running_or_notify_cancel() twice -> RuntimeError Future in unexpected
 * state (and on a finished one too) */
START_TEST(cfuture_set_running_twice_is_refused)
{
    cfuture_t *f = cfuture_new();
    ck_assert_int_eq(cfuture_set_running_or_notify_cancel(f), 1);
    errno = 0;
    ck_assert_int_eq(cfuture_set_running_or_notify_cancel(f), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_ptr_nonnull(strstr(executor_last_error(), "Future in unexpected state"));
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_RUNNING);
    ck_assert_int_eq(cfuture_set_result(f, ID(1)), 0);
    errno = 0;
    ck_assert_int_eq(cfuture_set_running_or_notify_cancel(f), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_FINISHED);
    cfuture_release(f);
}
END_TEST

/* f.set_result(7); f.set_result(8) -> InvalidStateError FINISHED: <Future ...>
 * f.set_exception(ValueError("x")) -> InvalidStateError; f.result() -> 7
 * f.cancel(); f.set_result(1) -> InvalidStateError CANCELLED: <Future ...> */
START_TEST(cfuture_set_twice_is_refused)
{
    cfuture_t *f = cfuture_new();
    ck_assert_int_eq(cfuture_set_result(f, ID(7)), 0);
    errno = 0;
    ck_assert_int_eq(cfuture_set_result(f, ID(8)), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_msg(strncmp(executor_last_error(), "FINISHED: <Future", 17) == 0, "got '%s'",
                  executor_last_error());
    loop_exception_t e = {"ValueError", "x"};
    errno = 0;
    ck_assert_int_eq(cfuture_set_exception(f, &e), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(cf_outcome(f, 0), "result=7");
    cfuture_release(f);

    f = cfuture_new();
    ck_assert_int_eq(cfuture_cancel(f), 1);
    errno = 0;
    ck_assert_int_eq(cfuture_set_result(f, ID(1)), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_msg(strncmp(executor_last_error(), "CANCELLED: <Future", 18) == 0, "got '%s'",
                  executor_last_error());
    ck_assert_int_eq(cfuture_set_exception(f, &e), -1);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_CANCELLED);
    cfuture_release(f);
}
END_TEST

/* f = Future(); f.result(timeout=0.05) -> TimeoutError '' after >= 0.05 s,
 * f._state PENDING; f.exception(timeout=0.01) -> TimeoutError, PENDING */
START_TEST(cfuture_result_timeout_leaves_the_future_alone)
{
    cfuture_t *f = cfuture_new();
    void *value = ID(99);
    loop_exception_t e;
    double t0 = now();
    errno = 0;
    ck_assert_int_eq(cfuture_result(f, 0.05, &value, &e), -1);
    ck_assert_int_eq(errno, ETIMEDOUT);
    ck_assert_double_ge(now() - t0, 0.049);
    ck_assert_str_eq(e.type, "TimeoutError");
    ck_assert_str_eq(e.message, "");
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_PENDING);
    errno = 0;
    ck_assert_int_eq(cfuture_exception(f, 0.01, &e), -1);
    ck_assert_int_eq(errno, ETIMEDOUT);
    ck_assert_str_eq(e.type, "TimeoutError");
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_PENDING);
    /* timeout 0: a look, no wait */
    ck_assert_int_eq(cfuture_result(f, 0, &value, NULL), -1);
    ck_assert_int_eq(errno, ETIMEDOUT);
    /* still usable */
    ck_assert_int_eq(cfuture_set_result(f, ID(3)), 0);
    ck_assert_str_eq(cf_outcome(f, 0.01), "result=3");
    cfuture_release(f);
}
END_TEST

START_TEST(cfuture_result_nan_timeout_refused)
{
    cfuture_t *f = cfuture_new();
    void *value;
    errno = 0;
    ck_assert_int_eq(cfuture_result(f, NAN, &value, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_PENDING);
    cfuture_release(f);
}
END_TEST

/* f.cancel(); f.result() -> CancelledError '' */
START_TEST(cfuture_result_of_cancelled)
{
    cfuture_t *f = cfuture_new();
    cfuture_cancel(f);
    void *value;
    loop_exception_t e;
    errno = 0;
    ck_assert_int_eq(cfuture_result(f, -1, &value, &e), -1);
    ck_assert_int_eq(errno, ECANCELED);
    ck_assert_str_eq(e.type, "CancelledError");
    errno = 0;
    ck_assert_int_eq(cfuture_exception(f, -1, &e), -1);
    ck_assert_int_eq(errno, ECANCELED);
    ck_assert_str_eq(e.type, "CancelledError");
    cfuture_release(f);
}
END_TEST

/* f.set_exception(ValueError("bad")); f.result() -> raises ValueError bad;
 * f.exception() -> ValueError('bad'); on a result: f.exception() -> None */
START_TEST(cfuture_result_of_error)
{
    cfuture_t *f = cfuture_new();
    loop_exception_t bad = {"ValueError", "bad"}, e;
    ck_assert_int_eq(cfuture_set_exception(f, &bad), 0);
    void *value;
    errno = 0;
    ck_assert_int_eq(cfuture_result(f, -1, &value, &e), -1);
    ck_assert_int_eq(errno, EIO);
    ck_assert_str_eq(e.type, "ValueError");
    ck_assert_str_eq(e.message, "bad");
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(cfuture_exception(f, -1, &e), 1);
    ck_assert_str_eq(e.type, "ValueError");
    ck_assert_str_eq(e.message, "bad");
    cfuture_release(f);

    f = cfuture_new();
    cfuture_set_result(f, ID(3));
    ck_assert_int_eq(cfuture_exception(f, -1, &e), 0);
    cfuture_release(f);
}
END_TEST

static char cb_log[200];
static pthread_t cb_thread;

static void cb_note(cfuture_t *f, void *arg)
{
    (void)f;
    cb_thread = pthread_self();
    strcat(cb_log, (const char *)arg);
}

/* order=[]; f.add_done_callback(a); f.add_done_callback(b); before: [];
 * f.set_result(1); after: ['a', 'b']; f.add_done_callback(c): at once
 * ['a', 'b', 'c'] */
START_TEST(cfuture_callbacks_in_order_and_at_once_when_done)
{
    cb_log[0] = '\0';
    cfuture_t *f = cfuture_new();
    ck_assert_int_eq(cfuture_add_done_callback(f, cb_note, "a"), 0);
    ck_assert_int_eq(cfuture_add_done_callback(f, cb_note, "b"), 0);
    ck_assert_str_eq(cb_log, "");
    ck_assert_int_eq(cfuture_set_result(f, ID(1)), 0);
    ck_assert_str_eq(cb_log, "ab");
    ck_assert_int_eq(cfuture_add_done_callback(f, cb_note, "c"), 0);
    ck_assert_str_eq(cb_log, "abc");
    errno = 0;
    ck_assert_int_eq(cfuture_add_done_callback(f, NULL, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    cfuture_release(f);
}
END_TEST

/* cancel() runs the callbacks too, once; set_running_or_notify_cancel does
 * not run them again. */
START_TEST(cfuture_cancel_runs_callbacks_once)
{
    cb_log[0] = '\0';
    cfuture_t *f = cfuture_new();
    cfuture_add_done_callback(f, cb_note, "x");
    ck_assert_int_eq(cfuture_cancel(f), 1);
    ck_assert_str_eq(cb_log, "x");
    ck_assert_int_eq(cfuture_cancel(f), 1);
    ck_assert_int_eq(cfuture_set_running_or_notify_cancel(f), 0);
    ck_assert_str_eq(cb_log, "x");
    cfuture_release(f);
}
END_TEST

static void *set_after_20ms(void *arg)
{
    sleep_ms(20);
    ck_assert_int_eq(cfuture_set_result(arg, ID(5)), 0);
    return NULL;
}

/* f.add_done_callback(cb); Thread(target=f.set_result, name="completer")
 *     -> the callback ran in 'completer'; and a waiter blocked in result()
 *        (no timeout) wakes with the value */
START_TEST(cfuture_callback_runs_in_completing_thread)
{
    cb_log[0] = '\0';
    cfuture_t *f = cfuture_new();
    cfuture_add_done_callback(f, cb_note, "done");
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, set_after_20ms, f), 0);
    ck_assert_str_eq(cf_outcome(f, -1), "result=5"); /* blocks until set */
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_str_eq(cb_log, "done");
    ck_assert(pthread_equal(cb_thread, t));
    cfuture_release(f);
}
END_TEST

START_TEST(cfuture_references)
{
    cfuture_t *f = cfuture_new();
    cfuture_retain(f);
    cfuture_release(f);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_PENDING); /* still alive */
    cfuture_release(f);
    cfuture_retain(NULL);
    cfuture_release(NULL);
}
END_TEST

/* =============================================================== executor */

/* f = ex.submit(job, 42); f.result() -> 42; ex.submit(bad).result() ->
 * ValueError job failed */
START_TEST(executor_results_and_errors)
{
    reset();
    executor_t *ex = executor_new(2, "p");
    ck_assert_ptr_nonnull(ex);
    ck_assert_uint_eq(executor_max_workers(ex), 2);
    cfuture_t *a = executor_submit(ex, job_value, ID(42));
    cfuture_t *b = executor_submit(ex, job_fail, ID(1));
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(cf_outcome(a, 5), "result=42");
    ck_assert_str_eq(cf_outcome(b, 5), "ValueError: job failed");
    void *value;
    errno = 0;
    ck_assert_int_eq(cfuture_result(b, 0, &value, NULL), -1);
    ck_assert_int_eq(errno, EIO);
    cfuture_release(a);
    cfuture_release(b);
    executor_free(ex);
    ck_assert_int_eq(ran(42), 1);
    ck_assert_int_eq(ran(1), 1);
}
END_TEST

/* ThreadPoolExecutor()._max_workers on 2 CPUs -> 6: min(32, CPUs + 4) */
START_TEST(executor_default_max_workers)
{
    executor_t *ex = executor_new(0, NULL);
    ck_assert_ptr_nonnull(ex);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned expected = (unsigned)(cpus + 4 < 32 ? cpus + 4 : 32);
    ck_assert_uint_eq(executor_max_workers(ex), expected);
    ck_assert_uint_eq(executor_threads(ex), 0);
    executor_free(ex);
}
END_TEST

/* ex = ThreadPoolExecutor(max_workers=1); ex.submit(gate.wait);
 * ex.submit(order.append, i) for i in range(5); gate.set(); shutdown()
 *     -> fifo [0, 1, 2, 3, 4] */
START_TEST(executor_fifo_with_one_worker)
{
    reset();
    executor_t *ex = executor_new(1, "p");
    cfuture_t *fs[6];
    fs[0] = executor_submit(ex, job_gated, ID(100));
    gate_await_waiters(1);
    for (int i = 0; i < 5; i++)
        fs[i + 1] = executor_submit(ex, job_value, ID(i));
    gate_open();
    for (int i = 0; i < 6; i++) {
        ck_assert_ptr_nonnull(fs[i]);
        cf_outcome(fs[i], 5);
        cfuture_release(fs[i]);
    }
    executor_free(ex);
    ck_assert_int_eq(norder, 6);
    ck_assert_int_eq(order[0], 100);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(order[i + 1], i);
}
END_TEST

/* ex = ThreadPoolExecutor(4, thread_name_prefix="p"): 0 threads at first;
 * ex.submit(f).result() -> 1 thread, named ['p_0']; jobs one at a time
 * (each waited for) -> still 1 (200 of them, five runs: 1 1 1 1 1).
 * _adjust_thread_count starts a thread only when no worker is idle.  A
 * worker becomes idle just after it set the result, so the test leaves it
 * a moment before the next submit (CPython has the same window). */
START_TEST(executor_threads_started_lazily)
{
    reset();
    executor_t *ex = executor_new(4, "p");
    ck_assert_uint_eq(executor_threads(ex), 0);
    cfuture_t *f = executor_submit(ex, job_value, ID(0));
    ck_assert_str_eq(cf_outcome(f, 5), "result=0");
    cfuture_release(f);
    ck_assert_uint_eq(executor_threads(ex), 1);
    ck_assert_str_eq(thread_names[0], "p_0");
    for (int i = 1; i <= 3; i++) {
        sleep_ms(50);
        f = executor_submit(ex, job_value, ID(i));
        cf_outcome(f, 5);
        cfuture_release(f);
    }
    ck_assert_uint_eq(executor_threads(ex), 1);
    executor_free(ex);
}
END_TEST

/* ex = ThreadPoolExecutor(4); 6 jobs that wait at a gate:
 *     -> 4 threads, started [0, 1, 2, 3]; the other two queued */
START_TEST(executor_max_workers_respected)
{
    reset();
    executor_t *ex = executor_new(4, "p");
    cfuture_t *fs[6];
    for (int i = 0; i < 6; i++)
        fs[i] = executor_submit(ex, job_gated, ID(i));
    gate_await_waiters(4);
    sleep_ms(20); /* a fifth worker, if there were one, would be waiting by now */
    ck_assert_int_eq(gate_waiters(), 4);
    ck_assert_uint_eq(executor_threads(ex), 4);
    ck_assert_int_eq(cfuture_get_state(fs[4]), CFUTURE_PENDING);
    ck_assert_int_eq(cfuture_get_state(fs[5]), CFUTURE_PENDING);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(cfuture_get_state(fs[i]), CFUTURE_RUNNING);
    gate_open();
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(cfuture_result(fs[i], 5, &(void *){0}, NULL), 0);
        cfuture_release(fs[i]);
    }
    ck_assert_uint_eq(executor_threads(ex), 4);
    executor_free(ex);
}
END_TEST

/* 4 jobs hold the 4 workers; fs[5].cancel() -> True (queued), fs[0].cancel()
 * -> False (running); gate.set(); shutdown(wait=True)
 *     -> started [0, 1, 2, 3, 4]; fs[5] cancelled, never ran; fs[0] finished */
START_TEST(executor_cancel_queued_and_running)
{
    reset();
    executor_t *ex = executor_new(4, "p");
    cfuture_t *fs[6];
    for (int i = 0; i < 6; i++)
        fs[i] = executor_submit(ex, job_gated, ID(i));
    gate_await_waiters(4);
    ck_assert_int_eq(cfuture_cancel(fs[5]), 1);
    ck_assert_int_eq(cfuture_cancel(fs[0]), 0);
    gate_open();
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(ran(i), 1);
    ck_assert_int_eq(ran(5), 0);
    ck_assert(cfuture_cancelled(fs[5]));
    ck_assert_int_eq(cfuture_get_state(fs[0]), CFUTURE_FINISHED);
    ck_assert_str_eq(cf_outcome(fs[0], 0), "result=0");
    for (int i = 0; i < 6; i++)
        cfuture_release(fs[i]);
    executor_free(ex);
}
END_TEST

static void *open_gate_after_50ms(void *arg)
{
    (void)arg;
    sleep_ms(50);
    gate_open();
    return NULL;
}

/* ex = ThreadPoolExecutor(1); ex.submit(gate.wait); 3 jobs queued;
 * Timer(0.1, gate.set); ex.shutdown(wait=True) -> ran [0, 1, 2] */
START_TEST(executor_shutdown_wait_runs_queued_jobs)
{
    reset();
    executor_t *ex = executor_new(1, "p");
    cfuture_t *g = executor_submit(ex, job_gated, ID(100));
    cfuture_t *fs[3];
    for (int i = 0; i < 3; i++)
        fs[i] = executor_submit(ex, job_value, ID(i));
    gate_await_waiters(1);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, open_gate_after_50ms, NULL), 0);
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0); /* returns when all have run */
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ran(i), 1);
        ck_assert_int_eq(cfuture_get_state(fs[i]), CFUTURE_FINISHED);
        cfuture_release(fs[i]);
    }
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0); /* again: harmless */
    pthread_join(t, NULL);
    cfuture_release(g);
    executor_free(ex);
}
END_TEST

/* ex.submit(gate.wait); 3 queued; ex.shutdown(wait=False, cancel_futures=True)
 *     -> ['CANCELLED', 'CANCELLED', 'CANCELLED'], the running one RUNNING;
 *     gate.set() -> ran [], the running one FINISHED */
START_TEST(executor_shutdown_cancel_futures)
{
    reset();
    executor_t *ex = executor_new(1, "p");
    cfuture_t *g = executor_submit(ex, job_gated, ID(100));
    gate_await_waiters(1);
    cfuture_t *fs[3];
    for (int i = 0; i < 3; i++)
        fs[i] = executor_submit(ex, job_value, ID(i));
    ck_assert_int_eq(executor_shutdown(ex, 0, 1), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(cfuture_get_state(fs[i]), CFUTURE_CANCELLED);
    ck_assert_int_eq(cfuture_get_state(g), CFUTURE_RUNNING);
    gate_open();
    ck_assert_str_eq(cf_outcome(g, 5), "result=100");
    executor_free(ex);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ran(i), 0);
        cfuture_release(fs[i]);
    }
    cfuture_release(g);
}
END_TEST

/* ex.shutdown(); ex.submit(f) -> RuntimeError cannot schedule new futures
 * after shutdown */
START_TEST(executor_submit_after_shutdown_refused)
{
    reset();
    executor_t *ex = executor_new(2, "p");
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0);
    errno = 0;
    ck_assert_ptr_null(executor_submit(ex, job_value, ID(0)));
    ck_assert_int_eq(errno, EPIPE);
    ck_assert_str_eq(executor_last_error(), "cannot schedule new futures after shutdown");
    errno = 0;
    ck_assert_ptr_null(executor_submit(ex, NULL, NULL));
    executor_free(ex);
    ck_assert_int_eq(ran(0), 0);

    ex = executor_new(2, "p");
    errno = 0;
    ck_assert_ptr_null(executor_submit(ex, NULL, NULL));
    ck_assert_int_eq(errno, EINVAL);
    executor_free(ex);
    executor_free(NULL);
}
END_TEST

/* shutdown(wait=1) from one of the executor's own jobs would wait for
 * itself: CPython sets _shutdown, then t.join() raises RuntimeError
 * "cannot join current thread".  Here: -1 EDEADLK, the shutdown done. */
static executor_t *self_ex;
static char self_error[200];
static int job_shutdown_self(void *arg, void **result, loop_exception_t *error)
{
    (void)arg;
    (void)error;
    errno = 0;
    int rc = executor_shutdown(self_ex, 1, 0);
    *result = (void *)(intptr_t)(rc == -1 && errno == EDEADLK);
    snprintf(self_error, sizeof self_error, "%s", executor_last_error());
    return 0;
}

START_TEST(executor_shutdown_wait_from_own_job_refused)
{
    self_ex = executor_new(1, "p");
    cfuture_t *f = executor_submit(self_ex, job_shutdown_self, NULL);
    ck_assert_str_eq(cf_outcome(f, 5), "result=1");
    ck_assert_msg(strncmp(self_error, "cannot join current thread", 26) == 0, "got '%s'",
                  self_error);
    errno = 0;
    ck_assert_ptr_null(executor_submit(self_ex, job_value, ID(1))); /* shut down all the same */
    ck_assert_int_eq(errno, EPIPE);
    cfuture_release(f);
    executor_free(self_ex);
}
END_TEST

/* executor_free with jobs queued: shutdown(wait=1) first, so they run and
 * every future is completed; nothing leaks (ASan, valgrind), even for jobs
 * whose futures the caller had released already. */
START_TEST(executor_free_with_jobs_queued)
{
    reset();
    executor_t *ex = executor_new(1, "p");
    cfuture_t *kept = executor_submit(ex, job_gated, ID(100));
    gate_await_waiters(1);
    for (int i = 0; i < 10; i++)
        cfuture_release(executor_submit(ex, job_value, ID(i)));
    cfuture_t *last = executor_submit(ex, job_value, ID(10));
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, open_gate_after_50ms, NULL), 0);
    executor_free(ex);
    pthread_join(t, NULL);
    for (int i = 0; i <= 10; i++)
        ck_assert_int_eq(ran(i), 1);
    ck_assert_str_eq(cf_outcome(last, 0), "result=10");
    ck_assert_str_eq(cf_outcome(kept, 0), "result=100");
    cfuture_release(last);
    cfuture_release(kept);
}
END_TEST

/* ================================================================= bridge */

/* A coroutine's frame, malloc'd and freed by its release hook, so that
 * AddressSanitizer and valgrind see a frame nobody released. */
typedef struct frame {
    coro_t coro;
    executor_t *ex;          /* run_in_executor's executor (NULL: the default) */
    executor_job job;
    void *arg;
    future_t *fut;           /* what run_in_executor returned (a reference) */
    double delay;
    sleep_t sleep;
    shutdown_default_executor_t sde;
    int refused_errno;       /* after shutdown_default_executor: the refusal */
    char refused[200];
    atomic_int *released;    /* if set: ++ when released */
    atomic_int *saw_cancel;  /* if set: ++ when it catches CancelledError */
} frame_t;

static void frame_release(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    if (f->released != NULL)
        atomic_fetch_add(f->released, 1);
    future_release(f->fut);
    free(f);
}

static frame_t *frame_new(coro_step_fn step, const char *name)
{
    frame_t *f = calloc(1, sizeof *f);
    ck_assert_ptr_nonnull(f);
    coro_init(&f->coro, step, name, frame_release);
    return f;
}

static loop_t *loop_of(coro_t *c)
{
    return future_get_loop(task_future(c->task));
}

/* The outcome of a loop future: "result=7", "ValueError: bad". */
static const char *outcome(future_t *f)
{
    static char buf[300];
    void *value = NULL;
    loop_exception_t e;
    if (future_result(f, &value, &e) == 0)
        snprintf(buf, sizeof buf, "result=%d", (int)(intptr_t)value);
    else
        snprintf(buf, sizeof buf, "%s: %s", e.type, e.message);
    return buf;
}

/* async def main(): return await loop.run_in_executor(ex, job, arg) */
static coro_status in_executor_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    f->fut = loop_run_in_executor(loop_of(c), f->ex, f->job, f->arg);
    if (f->fut == NULL)
        CORO_RAISE(c, "RuntimeError", "%s", loop_error(loop_of(c)));
    CORO_AWAIT(c, f->fut);
    CORO_RETURN(c, c->value);
    CORO_END(c);
}

/* Run `await loop.run_in_executor(ex, job, arg)` as a task until done; its
 * outcome. */
static const char *run_job(loop_t *loop, executor_t *ex, executor_job job, void *arg)
{
    static char buf[300];
    frame_t *f = frame_new(in_executor_step, "main");
    f->ex = ex;
    f->job = job;
    f->arg = arg;
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    snprintf(buf, sizeof buf, "%s", outcome(task_future(t)));
    task_release(t);
    return buf;
}

static loop_t *new_loop(void)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    return loop;
}

static void close_and_free(loop_t *loop)
{
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}

/* async def main(): v = await loop.run_in_executor(None, job) -> result 42
 *     try: await loop.run_in_executor(None, bad) except ValueError -> job failed */
START_TEST(run_in_executor_result_and_error_reach_a_task)
{
    reset();
    loop_t *loop = new_loop();
    ck_assert_str_eq(run_job(loop, NULL, job_value, ID(42)), "result=42");
    ck_assert_str_eq(run_job(loop, NULL, job_fail, ID(1)), "ValueError: job failed");
    executor_t *ex = executor_new(1, "mine");
    ck_assert_str_eq(run_job(loop, ex, job_value, ID(2)), "result=2");
    close_and_free(loop);
    executor_free(ex);
}
END_TEST

/* loop._default_executor._thread_name_prefix, its threads' names
 *     -> asyncio ['asyncio_0'] (made by the first run_in_executor) */
START_TEST(default_executor_made_on_first_use)
{
    reset();
    loop_t *loop = new_loop();
    ck_assert_str_eq(run_job(loop, NULL, job_value, ID(3)), "result=3");
    ck_assert_str_eq(thread_names[3], "asyncio_0");
    close_and_free(loop);
}
END_TEST

/* loop.set_default_executor(ThreadPoolExecutor(1, thread_name_prefix="mine")):
 * run_in_executor(None, ...) runs there; close() shuts it down (wait=False):
 * ex.submit() -> cannot schedule new futures after shutdown */
START_TEST(set_default_executor_is_used_and_shut_down_by_close)
{
    reset();
    loop_t *loop = new_loop();
    executor_t *ex = executor_new(1, "mine");
    errno = 0;
    ck_assert_int_eq(loop_set_default_executor(loop, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(loop_set_default_executor(loop, ex), 0);
    ck_assert_str_eq(run_job(loop, NULL, job_value, ID(4)), "result=4");
    ck_assert_str_eq(thread_names[4], "mine_0");
    close_and_free(loop);
    errno = 0;
    ck_assert_ptr_null(executor_submit(ex, job_value, ID(5)));
    ck_assert_int_eq(errno, EPIPE);
    executor_free(ex);
    ck_assert_int_eq(ran(5), 0);
}
END_TEST

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* One tick: what a callback queued now runs now. */
static void one_tick(loop_t *loop)
{
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

/* ex = ThreadPoolExecutor(1); f0 = run_in_executor(ex, gate.wait);
 * f1 = run_in_executor(ex, ran.append, 1); f1.cancel(); two ticks;
 * gate.set(); await f0 -> f1 cancelled True, ran [] */
START_TEST(cancel_loop_future_cancels_queued_job)
{
    reset();
    loop_t *loop = new_loop();
    executor_t *ex = executor_new(1, "p");
    future_t *f0 = loop_run_in_executor(loop, ex, job_gated, ID(100));
    future_t *f1 = loop_run_in_executor(loop, ex, job_value, ID(1));
    ck_assert_ptr_nonnull(f0);
    ck_assert_ptr_nonnull(f1);
    gate_await_waiters(1);
    ck_assert_int_eq(future_cancel(f1, NULL), 1);
    one_tick(loop); /* _call_check_cancel: the job's future is cancelled */
    one_tick(loop);
    gate_open();
    ck_assert_int_eq(loop_run_until_complete(loop, f0), 0);
    ck_assert_str_eq(outcome(f0), "result=100");
    ck_assert(future_cancelled(f1));
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0);
    ck_assert_int_eq(ran(1), 0);
    future_release(f0);
    future_release(f1);
    close_and_free(loop);
    executor_free(ex);
}
END_TEST

/* Cancelling the loop's future of a job that runs already: the job goes
 * on (Future.cancel() of a RUNNING future is False), the loop's future
 * stays cancelled; the job's result is dropped (_copy_future_state: dest
 * cancelled -> return). */
START_TEST(cancel_loop_future_of_running_job)
{
    reset();
    loop_t *loop = new_loop();
    executor_t *ex = executor_new(1, "p");
    future_t *f0 = loop_run_in_executor(loop, ex, job_gated, ID(100));
    gate_await_waiters(1);
    ck_assert_int_eq(future_cancel(f0, NULL), 1);
    one_tick(loop);
    gate_open();
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0);
    ck_assert_int_eq(ran(100), 1);
    /* the result comes home (call_soon_threadsafe) and is dropped */
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.05, stop_cb, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert(future_cancelled(f0));
    future_release(f0);
    close_and_free(loop);
    executor_free(ex);
}
END_TEST

/* async def main(): await run_in_executor(None, job);
 *     await loop.shutdown_default_executor();
 *     loop.run_in_executor(None, job) -> Executor shutdown has been called
 * and another executor still works: run_in_executor(ex, job) -> 42 */
static coro_status shutdown_then_refused_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    f->fut = loop_run_in_executor(loop_of(c), NULL, job_value, ID(6));
    CORO_AWAIT(c, f->fut);
    CORO_CALL(c, shutdown_default_executor_init(&f->sde, loop_of(c)));
    errno = 0;
    if (loop_run_in_executor(loop_of(c), NULL, job_value, ID(7)) != NULL)
        CORO_RAISE(c, "AssertionError", "run_in_executor accepted a job after shutdown");
    f->refused_errno = errno;
    snprintf(f->refused, sizeof f->refused, "%s", loop_error(loop_of(c)));
    CORO_RETURN(c, ID(1));
    CORO_END(c);
}

START_TEST(shutdown_default_executor_then_refused)
{
    reset();
    loop_t *loop = new_loop();
    frame_t *f = frame_new(shutdown_then_refused_step, "main");
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(outcome(task_future(t)), "result=1");
    ck_assert_int_eq(f->refused_errno, EPIPE);
    ck_assert_str_eq(f->refused, "Executor shutdown has been called");
    task_release(t);
    ck_assert_int_eq(ran(6), 1);
    ck_assert_int_eq(ran(7), 0);
    executor_t *ex = executor_new(1, "p");
    ck_assert_str_eq(run_job(loop, ex, job_value, ID(8)), "result=8");
    close_and_free(loop);
    executor_free(ex);
}
END_TEST

/* await loop.shutdown_default_executor() with no default executor: returns
 * at once; and from then on the default executor is refused all the same. */
static coro_status shutdown_only_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_CALL(c, shutdown_default_executor_init(&f->sde, loop_of(c)));
    CORO_RETURN(c, ID(2));
    CORO_END(c);
}

START_TEST(shutdown_default_executor_without_one)
{
    reset();
    loop_t *loop = new_loop();
    frame_t *f = frame_new(shutdown_only_step, "main");
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(outcome(task_future(t)), "result=2");
    task_release(t);
    errno = 0;
    ck_assert_ptr_null(loop_run_in_executor(loop, NULL, job_value, ID(1)));
    ck_assert_int_eq(errno, EPIPE);
    ck_assert_str_eq(loop_error(loop), "Executor shutdown has been called");
    close_and_free(loop);
    ck_assert_int_eq(ran(1), 0);
}
END_TEST

/* loop.close(); loop.run_in_executor(None, job) -> Event loop is closed
 * (the closed check comes first: base_events.run_in_executor calls
 * _check_closed() before _check_default_executor()); with an executor of
 * one's own, the same. */
START_TEST(run_in_executor_on_closed_loop_refused)
{
    reset();
    loop_t *loop = new_loop();
    ck_assert_str_eq(run_job(loop, NULL, job_value, ID(1)), "result=1");
    ck_assert_int_eq(loop_close(loop), 0);
    errno = 0;
    ck_assert_ptr_null(loop_run_in_executor(loop, NULL, job_value, ID(2)));
    ck_assert_int_eq(errno, EBADF);
    ck_assert_str_eq(loop_error(loop), "Event loop is closed");
    executor_t *ex = executor_new(1, "p");
    errno = 0;
    ck_assert_ptr_null(loop_run_in_executor(loop, ex, job_value, ID(3)));
    ck_assert_int_eq(errno, EBADF);
    ck_assert_str_eq(loop_error(loop), "Event loop is closed");
    errno = 0;
    loop_t *fresh = new_loop();
    ck_assert_ptr_null(loop_run_in_executor(fresh, ex, NULL, NULL));
    ck_assert_int_eq(errno, EINVAL);
    close_and_free(fresh);
    loop_free(loop);
    executor_free(ex);
    ck_assert_int_eq(ran(2) + ran(3), 0);
}
END_TEST

static void *set_cf_after_20ms(void *arg)
{
    sleep_ms(20);
    ck_assert_int_eq(cfuture_set_result(arg, ID(5)), 0);
    return NULL;
}

/* c = concurrent.futures.Future(); f = asyncio.wrap_future(c, loop=loop)
 * threading.Timer(0.02, c.set_result, [5]).start(); run_until_complete(f)  -> 5
 * c2: f2 = wrap_future(c2); f2.cancel(); one turn of the loop -> c2 CANCELLED
 * c3 failed before the wrap: f3 not done at once; run_until_complete(f3) -> ValueError x
 * c4.cancel() -> f4 cancelled */
START_TEST(wrap_future_follows_the_cfuture_both_ways)
{
    loop_t *loop = new_loop();
    cfuture_t *c = cfuture_new();
    future_t *f = loop_wrap_future(loop, c);
    ck_assert_ptr_nonnull(f);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, set_cf_after_20ms, c), 0);
    ck_assert_int_eq(loop_run_until_complete(loop, f), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_str_eq(outcome(f), "result=5");
    future_release(f);
    cfuture_release(c);

    cfuture_t *c2 = cfuture_new();
    future_t *f2 = loop_wrap_future(loop, c2);
    ck_assert_int_eq(future_cancel(f2, NULL), 1);
    one_tick(loop);
    ck_assert_int_eq(cfuture_get_state(c2), CFUTURE_CANCELLED);
    future_release(f2);
    cfuture_release(c2);

    cfuture_t *c3 = cfuture_new();
    loop_exception_t x = {"ValueError", "x"};
    ck_assert_int_eq(cfuture_set_exception(c3, &x), 0);
    future_t *f3 = loop_wrap_future(loop, c3);
    ck_assert(!future_done(f3)); /* its state comes home through call_soon_threadsafe */
    ck_assert_int_eq(loop_run_until_complete(loop, f3), 0);
    ck_assert_str_eq(outcome(f3), "ValueError: x");
    future_release(f3);
    cfuture_release(c3);

    cfuture_t *c4 = cfuture_new();
    future_t *f4 = loop_wrap_future(loop, c4);
    ck_assert_int_eq(cfuture_cancel(c4), 1);
    ck_assert_int_eq(loop_run_until_complete(loop, f4), 0);
    ck_assert(future_cancelled(f4));
    future_release(f4);
    cfuture_release(c4);

    errno = 0;
    ck_assert_ptr_null(loop_wrap_future(loop, NULL));
    ck_assert_int_eq(errno, EINVAL);
    close_and_free(loop);
}
END_TEST

/* shutdown_default_executor waits for the job that runs, in a thread of
 * its own: the loop goes on meanwhile (a timer of the loop opens the gate).
 *     async def main():
 *         fut = loop.run_in_executor(None, gate.wait)
 *         loop.call_later(0.05, timer)          # ticks.append("timer"); gate.set()
 *         await loop.shutdown_default_executor()
 *         ticks.append("shut down"); print(fut.done())
 *     -> True ['timer', 'shut down'] */
static void open_gate_cb(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    record(1); /* "timer" */
    gate_open();
}

static coro_status shutdown_waits_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    f->fut = loop_run_in_executor(loop_of(c), NULL, job_gated, ID(100));
    if (f->fut == NULL)
        CORO_RAISE(c, "RuntimeError", "%s", loop_error(loop_of(c)));
    if (loop_call_later(loop_of(c), 0.05, open_gate_cb, NULL) == NULL)
        CORO_RAISE(c, "RuntimeError", "%s", loop_error(loop_of(c)));
    CORO_CALL(c, shutdown_default_executor_init(&f->sde, loop_of(c)));
    record(2); /* "shut down" */
    CORO_RETURN(c, ID(future_done(f->fut)));
    CORO_END(c);
}

START_TEST(shutdown_default_executor_waits_while_the_loop_runs)
{
    reset();
    loop_t *loop = new_loop();
    frame_t *f = frame_new(shutdown_waits_step, "main");
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(outcome(task_future(t)), "result=1");
    task_release(t);
    ck_assert_int_eq(norder, 3);
    ck_assert_int_eq(order[0], 1);   /* the timer, while the shutdown waited */
    ck_assert_int_eq(order[1], 100); /* the job, let through by the timer */
    ck_assert_int_eq(order[2], 2);   /* then the shutdown returned */
    close_and_free(loop);
}
END_TEST

/* Wait (at most 5 s) until job id has run. */
static void await_ran(int id)
{
    double deadline = now() + 5.0;
    while (ran(id) == 0 && now() < deadline)
        sleep_ms(1);
    ck_assert_int_eq(ran(id), 1);
}

/* The loop closed while its default executor's job runs: close() shuts the
 * executor down without waiting; the job completes; its result, sent home
 * with call_soon_threadsafe, finds the loop closed and is dropped (nothing
 * runs on a closed loop); loop_free after that leaks nothing. */
START_TEST(loop_closed_while_default_executor_job_runs)
{
    reset();
    loop_t *loop = new_loop();
    future_t *f = loop_run_in_executor(loop, NULL, job_gated, ID(100));
    ck_assert_ptr_nonnull(f);
    gate_await_waiters(1);
    ck_assert_int_eq(loop_close(loop), 0);
    gate_open();
    await_ran(100);
    sleep_ms(20); /* the worker sends the result home: refused, dropped */
    ck_assert(!future_done(f));
    loop_free(loop);
    ck_assert(!future_done(f));
    future_release(f);
}
END_TEST

/* The same, the loop freed while the job still runs: nothing of the
 * bridge may reach the freed loop when the job completes (AddressSanitizer
 * and valgrind watch).  Default executor: loop_free must take care of it. */
START_TEST(loop_freed_while_default_executor_job_runs)
{
    reset();
    loop_t *loop = new_loop();
    future_t *f = loop_run_in_executor(loop, NULL, job_gated, ID(100));
    ck_assert_ptr_nonnull(f);
    gate_await_waiters(1);
    ck_assert_int_eq(loop_close(loop), 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, open_gate_after_50ms, NULL), 0);
    loop_free(loop);
    pthread_join(t, NULL);
    await_ran(100);
    sleep_ms(20);
    ck_assert(!future_done(f));
    future_release(f);
}
END_TEST

/* An executor of the caller's (set_default_executor's rule: freed after
 * loop_free): close and free the loop while its job runs, then let the job
 * finish and free the executor. */
START_TEST(loop_freed_while_own_executor_job_runs)
{
    reset();
    loop_t *loop = new_loop();
    executor_t *ex = executor_new(1, "p");
    future_t *f = loop_run_in_executor(loop, ex, job_gated, ID(100));
    future_t *queued = loop_run_in_executor(loop, ex, job_value, ID(1));
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(queued);
    gate_await_waiters(1);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    gate_open();
    executor_free(ex); /* both jobs run (an executor of one's own is not shut down) */
    ck_assert_int_eq(ran(100), 1);
    ck_assert_int_eq(ran(1), 1);
    ck_assert(!future_done(f));
    future_release(f);
    future_release(queued);
}
END_TEST

/* ======================================================= run_coroutine_threadsafe */

static void *loop_thread_main(void *arg)
{
    loop_t *loop = arg;
    ck_assert_int_eq(loop_run_forever(loop), 0);
    return NULL;
}

static pthread_t start_loop_thread(loop_t *loop)
{
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, loop_thread_main, loop), 0);
    return t;
}

static void stop_loop_thread(loop_t *loop, pthread_t t)
{
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, stop_cb, NULL));
    ck_assert_int_eq(pthread_join(t, NULL), 0);
}

/* async def ok(): await asyncio.sleep(delay); return 7 */
static coro_status sleep_then_7_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&f->sleep, f->delay));
    if (c->failed) {
        if (strcmp(c->error.type, "CancelledError") == 0 && f->saw_cancel != NULL)
            atomic_fetch_add(f->saw_cancel, 1);
        CORO_RERAISE(c);
    }
    CORO_RETURN(c, ID(7));
    CORO_END(c);
}

/* async def bad(): raise ValueError("coro failed") */
static coro_status bad_step(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_RAISE(c, "ValueError", "coro failed");
    CORO_END(c);
}

static frame_t *sleeper(double delay, atomic_int *released, atomic_int *saw_cancel)
{
    frame_t *f = frame_new(sleep_then_7_step, "ok");
    f->delay = delay;
    f->released = released;
    f->saw_cancel = saw_cancel;
    return f;
}

/* t = Thread(target=loop.run_forever); run_coroutine_threadsafe(ok(), loop)
 *     .result(timeout=5) -> result 7;  (bad(), loop).result(5) -> error coro failed */
START_TEST(run_coroutine_threadsafe_result_and_error)
{
    loop_t *loop = new_loop();
    pthread_t t = start_loop_thread(loop);
    atomic_int released = 0;
    cfuture_t *f = loop_run_coroutine_threadsafe(loop, &sleeper(0.01, &released, NULL)->coro);
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(cf_outcome(f, 5), "result=7");
    cfuture_release(f);

    frame_t *b = frame_new(bad_step, "bad");
    b->released = &released;
    f = loop_run_coroutine_threadsafe(loop, &b->coro);
    ck_assert_ptr_nonnull(f);
    void *value;
    loop_exception_t e;
    errno = 0;
    ck_assert_int_eq(cfuture_result(f, 5, &value, &e), -1);
    ck_assert_int_eq(errno, EIO);
    ck_assert_str_eq(e.type, "ValueError");
    ck_assert_str_eq(e.message, "coro failed");
    cfuture_release(f);
    stop_loop_thread(loop, t);
    close_and_free(loop);
    ck_assert_int_eq(atomic_load(&released), 2);
}
END_TEST

/* f = run_coroutine_threadsafe(slow(), loop)   # slow: sleep(10), notes CancelledError
 * f.result(timeout=0.05) -> TimeoutError, state PENDING
 * f.cancel() -> True CANCELLED; a moment later: coroutine saw
 *     ['CancelledError'], state CANCELLED_AND_NOTIFIED */
START_TEST(run_coroutine_threadsafe_timeout_then_cancel)
{
    loop_t *loop = new_loop();
    pthread_t t = start_loop_thread(loop);
    atomic_int released = 0, saw_cancel = 0;
    cfuture_t *f = loop_run_coroutine_threadsafe(loop, &sleeper(10, &released, &saw_cancel)->coro);
    ck_assert_ptr_nonnull(f);
    void *value;
    loop_exception_t e;
    double t0 = now();
    errno = 0;
    ck_assert_int_eq(cfuture_result(f, 0.05, &value, &e), -1);
    ck_assert_int_eq(errno, ETIMEDOUT);
    ck_assert_str_eq(e.type, "TimeoutError");
    ck_assert_double_ge(now() - t0, 0.049);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_PENDING);
    ck_assert_int_eq(cfuture_cancel(f), 1);
    /* CANCELLED, or already CANCELLED_AND_NOTIFIED: the cancel's callback
     * sent task.cancel to the loop's thread, which may have run it and
     * copied the task's state back before this line (Python printed
     * CANCELLED only because the GIL stays with the caller) */
    ck_assert(cfuture_cancelled(f));
    double deadline = now() + 5;
    while (atomic_load(&released) == 0 && now() < deadline)
        sleep_ms(1);
    ck_assert_int_eq(atomic_load(&saw_cancel), 1);
    ck_assert_int_eq(atomic_load(&released), 1);
    stop_loop_thread(loop, t);
    ck_assert_int_eq(cfuture_get_state(f), CFUTURE_CANCELLED_AND_NOTIFIED);
    errno = 0;
    ck_assert_int_eq(cfuture_result(f, 0, &value, &e), -1);
    ck_assert_int_eq(errno, ECANCELED);
    cfuture_release(f);
    close_and_free(loop);
}
END_TEST

/* run_coroutine_threadsafe refusals: no coroutine, no loop, a closed loop
 * (coro untouched, still the caller's). */
START_TEST(run_coroutine_threadsafe_refusals)
{
    loop_t *loop = new_loop();
    atomic_int released = 0;
    frame_t *c = sleeper(0, &released, NULL);
    errno = 0;
    ck_assert_ptr_null(loop_run_coroutine_threadsafe(loop, NULL));
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(loop_run_coroutine_threadsafe(NULL, &c->coro));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(loop_close(loop), 0);
    errno = 0;
    ck_assert_ptr_null(loop_run_coroutine_threadsafe(loop, &c->coro));
    ck_assert_int_eq(errno, EBADF);
    ck_assert_str_eq(executor_last_error(), "Event loop is closed");
    ck_assert_int_eq(atomic_load(&released), 0);
    c->coro.release(&c->coro);
    loop_free(loop);
}
END_TEST

struct waiter {
    cfuture_t *f;
    int rc, err;
    loop_exception_t e;
};

static void *wait_for_cfuture(void *arg)
{
    struct waiter *w = arg;
    void *value;
    errno = 0;
    w->rc = cfuture_result(w->f, 10, &value, &w->e);
    w->err = errno;
    return NULL;
}

/* The loop closed before the callback of run_coroutine_threadsafe ran: a
 * waiter (another thread, no timeout to speak of) does not hang: the
 * cfuture is cancelled, the coroutine released unrun.  (CPython's waiter
 * would hang: its callback is dropped with the loop's ready queue.) */
START_TEST(run_coroutine_threadsafe_loop_closed_before_callback)
{
    loop_t *loop = new_loop();
    atomic_int released = 0;
    cfuture_t *f = loop_run_coroutine_threadsafe(loop, &sleeper(0, &released, NULL)->coro);
    ck_assert_ptr_nonnull(f);
    struct waiter w = {f, 0, 0, {"", ""}};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, wait_for_cfuture, &w), 0);
    sleep_ms(10);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    double t0 = now();
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_double_lt(now() - t0, 5.0);
    ck_assert_int_eq(w.rc, -1);
    ck_assert_int_eq(w.err, ECANCELED);
    ck_assert_str_eq(w.e.type, "CancelledError");
    ck_assert(cfuture_cancelled(f));
    ck_assert_int_eq(atomic_load(&released), 1);
    cfuture_release(f);
}
END_TEST

/* ====================================================== debug mode's check */

/* l3.set_debug(True); a callback of the loop starts a thread that calls
 * l3.call_soon(f) -> RuntimeError Non-thread-safe operation invoked on an
 * event loop other than the current one.  Here the loop's thread waits at
 * the gate inside its callback while the other thread makes the call, so
 * nothing races. */
struct other_call {
    loop_t *loop;
    handle_t *handle;       /* call_soon's */
    int err;
    char message[200];
    handle_t *later;        /* call_later's (call_at's check: _check_thread too) */
    int later_err;
};

static void noop(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

static void *call_soon_from_other_thread(void *arg)
{
    struct other_call *oc = arg;
    errno = 0;
    oc->handle = loop_call_soon(oc->loop, noop, NULL);
    oc->err = errno;
    snprintf(oc->message, sizeof oc->message, "%s", loop_error(oc->loop));
    errno = 0;
    oc->later = loop_call_later(oc->loop, 100, noop, NULL);
    oc->later_err = errno;
    return NULL;
}

static void call_from_other_thread_cb(loop_t *loop, void *arg)
{
    struct other_call *oc = arg;
    oc->loop = loop;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, call_soon_from_other_thread, oc), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0); /* the loop's thread waits here */
    loop_stop(loop);
}

START_TEST(debug_mode_refuses_call_soon_from_another_thread)
{
    loop_t *loop = new_loop();
    loop_set_debug(loop, 1);
    struct other_call oc = {0};
    ck_assert_ptr_nonnull(loop_call_soon(loop, call_from_other_thread_cb, &oc));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_ptr_null(oc.handle);
    ck_assert_int_eq(oc.err, EPERM);
    ck_assert_str_eq(oc.message,
                     "Non-thread-safe operation invoked on an event loop other than the current one");
    ck_assert_ptr_null(oc.later);
    ck_assert_int_eq(oc.later_err, EPERM);
    /* the loop not running: _thread_id is None, nothing to check */
    pthread_t t;
    oc.loop = loop;
    ck_assert_int_eq(pthread_create(&t, NULL, call_soon_from_other_thread, &oc), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_ptr_nonnull(oc.handle);
    ck_assert_ptr_nonnull(oc.later);
    close_and_free(loop);
}
END_TEST

/* Without debug mode nobody checks (CPython: the same program, set_debug(False),
 * accepts the call). */
START_TEST(no_debug_mode_no_thread_check)
{
    loop_t *loop = new_loop();
    struct other_call oc = {0};
    ck_assert_ptr_nonnull(loop_call_soon(loop, call_from_other_thread_cb, &oc));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_ptr_nonnull(oc.handle);
    ck_assert_ptr_nonnull(oc.later);
    close_and_free(loop);
}
END_TEST

/* l3.set_debug(True); a callback of the loop starts a thread that calls
 * l3.create_task(c()) -> RuntimeError Non-thread-safe operation invoked on
 * an event loop other than the current one (Task.__init__'s call_soon
 * checks), and asyncio.all_tasks(l3) stays empty: the task never existed.
 * CPython leaves the coroutine to the garbage collector ("never awaited");
 * here it is released at once.  The message is the refused thread's: the
 * loop's own loop_error() is not written by another thread. */
struct other_task {
    loop_t *loop;
    task_t *task;
    int err;
    char message[200];      /* loop_error() in the refused thread */
    char loop_message[200]; /* loop_error() in the loop's thread, after */
    atomic_int released;
};

static coro_status returns_at_once_step(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_RETURN(c, NULL);
    CORO_END(c);
}

static void *create_task_from_other_thread(void *arg)
{
    struct other_task *ot = arg;
    frame_t *f = frame_new(returns_at_once_step, "c");
    f->released = &ot->released;
    errno = 0;
    ot->task = loop_create_task(ot->loop, &f->coro);
    ot->err = errno;
    snprintf(ot->message, sizeof ot->message, "%s", loop_error(ot->loop));
    return NULL;
}

static void create_task_from_other_thread_cb(loop_t *loop, void *arg)
{
    struct other_task *ot = arg;
    ot->loop = loop;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, create_task_from_other_thread, ot), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0); /* the loop's thread waits here */
    snprintf(ot->loop_message, sizeof ot->loop_message, "%s", loop_error(loop));
    loop_stop(loop);
}

START_TEST(debug_mode_refuses_create_task_from_another_thread)
{
    loop_t *loop = new_loop();
    loop_set_debug(loop, 1);
    struct other_task ot = {0};
    ck_assert_ptr_nonnull(loop_call_soon(loop, create_task_from_other_thread_cb, &ot));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_ptr_null(ot.task);
    ck_assert_int_eq(ot.err, EPERM);
    ck_assert_str_eq(ot.message,
                     "Non-thread-safe operation invoked on an event loop other than the current one");
    ck_assert_str_eq(ot.loop_message, "");
    ck_assert_int_eq(atomic_load(&ot.released), 1);
    ck_assert_uint_eq(loop_all_tasks(loop, NULL, 0), 0);
    close_and_free(loop);
}
END_TEST

/* ==================================================================== OOM */

/* executor_submit with its Nth allocation failing, for every N until one
 * succeeds: each refusal is ENOMEM (or EAGAIN: no thread could start) and
 * nothing of it runs; each accepted job runs once. */
START_TEST(oom_executor_submit)
{
    reset();
    executor_t *ex = executor_new(1, "p");
    ck_assert_ptr_nonnull(ex);
    cfuture_t *accepted[200];
    int ids[200], n = 0;
    for (long k = 1; k < 200; k++) {
        failalloc_arm(k, 0);
        errno = 0;
        cfuture_t *f = executor_submit(ex, job_value, ID(k));
        int err = errno;
        long failed = failalloc_failed;
        failalloc_disarm();
        if (f == NULL) {
            ck_assert_msg(err == ENOMEM || err == EAGAIN, "allocation %ld: errno %d", k, err);
            continue;
        }
        accepted[n] = f;
        ids[n++] = (int)k;
        if (failed == 0)
            break;
    }
    ck_assert_int_gt(n, 0);
    executor_free(ex);
    for (int i = 0; i < n; i++) {
        char want[32];
        snprintf(want, sizeof want, "result=%d", ids[i]);
        ck_assert_str_eq(cf_outcome(accepted[i], 0), want);
        cfuture_release(accepted[i]);
    }
    int total = 0;
    for (int k = 1; k < 200; k++)
        total += ran(k);
    ck_assert_int_eq(total, n);
}
END_TEST

/* loop_run_in_executor with its Nth allocation failing: a refused call
 * leaves no job behind (the worker is held at the gate, so a job submitted
 * and not cancelled would still be queued, and would run once the gate
 * opens); an accepted one delivers its result to the loop. */
START_TEST(oom_run_in_executor)
{
    reset();
    loop_t *loop = new_loop();
    executor_t *ex = executor_new(1, "p");
    cfuture_t *g = executor_submit(ex, job_gated, ID(1000));
    gate_await_waiters(1);
    future_t *accepted[200];
    int ids[200], n = 0;
    for (long k = 1; k < 200; k++) {
        failalloc_arm(k, 0);
        errno = 0;
        future_t *f = loop_run_in_executor(loop, ex, job_value, ID(k));
        int err = errno;
        long failed = failalloc_failed;
        failalloc_disarm();
        if (f == NULL) {
            ck_assert_msg(err == ENOMEM || err == EAGAIN, "allocation %ld: errno %d", k, err);
            continue;
        }
        accepted[n] = f;
        ids[n++] = (int)k;
        if (failed == 0)
            break;
    }
    ck_assert_int_gt(n, 0);
    gate_open();
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(loop_run_until_complete(loop, accepted[i]), 0);
        char want[32];
        snprintf(want, sizeof want, "result=%d", ids[i]);
        ck_assert_str_eq(outcome(accepted[i]), want);
        future_release(accepted[i]);
    }
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0); /* every job queued has run now */
    cfuture_release(g);
    for (int k = 1; k < 200; k++) {
        int accepted_k = 0;
        for (int i = 0; i < n; i++)
            accepted_k |= ids[i] == k;
        ck_assert_msg(ran(k) == accepted_k, "job %d ran %d times, accepted %d", k, ran(k),
                      accepted_k);
    }
    close_and_free(loop);
    executor_free(ex); /* after loop_free of the loop it ran jobs for (executor.h) */
}
END_TEST

/* loop_run_coroutine_threadsafe with its Nth allocation failing: a refusal
 * (ENOMEM) leaves the coroutine the caller's, unrun; every accepted one
 * runs once and its cfuture gets the result. */
START_TEST(oom_run_coroutine_threadsafe)
{
    loop_t *loop = new_loop();
    atomic_int released = 0;
    cfuture_t *accepted[200];
    int n = 0, refused = 0;
    for (long k = 1; k < 200; k++) {
        frame_t *c = sleeper(0, &released, NULL);
        failalloc_arm(k, 0);
        errno = 0;
        cfuture_t *f = loop_run_coroutine_threadsafe(loop, &c->coro);
        int err = errno;
        long failed = failalloc_failed;
        failalloc_disarm();
        if (f == NULL) {
            ck_assert_msg(err == ENOMEM, "allocation %ld: errno %d", k, err);
            /* not released by the refusal: only by this test, once per earlier refusal */
            ck_assert_int_eq(atomic_load(&released), refused);
            c->coro.release(&c->coro);
            refused++;
            continue;
        }
        accepted[n++] = f;
        if (failed == 0)
            break;
    }
    ck_assert_int_gt(n, 0);
    atomic_store(&released, 0);
    pthread_t t = start_loop_thread(loop);
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq(cf_outcome(accepted[i], 5), "result=7");
        cfuture_release(accepted[i]);
    }
    stop_loop_thread(loop, t);
    close_and_free(loop);
    ck_assert_int_eq(atomic_load(&released), n);
}
END_TEST

static Suite *executor_suite(void)
{
    Suite *s = suite_create("executor");
    TCase *tc = tcase_create("cfuture");
    tcase_add_test(tc, cfuture_cancel_pending_is_cancelled);
    tcase_add_test(tc, cfuture_cancel_running_is_refused);
    tcase_add_test(tc, cfuture_cancel_finished_is_refused);
    tcase_add_test(tc, cfuture_set_running_on_cancelled_notifies);
    tcase_add_test(tc, cfuture_set_running_twice_is_refused);
    tcase_add_test(tc, cfuture_set_twice_is_refused);
    tcase_add_test(tc, cfuture_result_timeout_leaves_the_future_alone);
    tcase_add_test(tc, cfuture_result_nan_timeout_refused);
    tcase_add_test(tc, cfuture_result_of_cancelled);
    tcase_add_test(tc, cfuture_result_of_error);
    tcase_add_test(tc, cfuture_callbacks_in_order_and_at_once_when_done);
    tcase_add_test(tc, cfuture_cancel_runs_callbacks_once);
    tcase_add_test(tc, cfuture_callback_runs_in_completing_thread);
    tcase_add_test(tc, cfuture_references);
    suite_add_tcase(s, tc);
    tc = tcase_create("executor");
    tcase_add_test(tc, executor_results_and_errors);
    tcase_add_test(tc, executor_default_max_workers);
    tcase_add_test(tc, executor_fifo_with_one_worker);
    tcase_add_test(tc, executor_threads_started_lazily);
    tcase_add_test(tc, executor_max_workers_respected);
    tcase_add_test(tc, executor_cancel_queued_and_running);
    tcase_add_test(tc, executor_shutdown_wait_runs_queued_jobs);
    tcase_add_test(tc, executor_shutdown_cancel_futures);
    tcase_add_test(tc, executor_submit_after_shutdown_refused);
    tcase_add_test(tc, executor_shutdown_wait_from_own_job_refused);
    tcase_add_test(tc, executor_free_with_jobs_queued);
    suite_add_tcase(s, tc);
    tc = tcase_create("bridge");
    tcase_add_test(tc, run_in_executor_result_and_error_reach_a_task);
    tcase_add_test(tc, default_executor_made_on_first_use);
    tcase_add_test(tc, set_default_executor_is_used_and_shut_down_by_close);
    tcase_add_test(tc, cancel_loop_future_cancels_queued_job);
    tcase_add_test(tc, cancel_loop_future_of_running_job);
    tcase_add_test(tc, shutdown_default_executor_then_refused);
    tcase_add_test(tc, shutdown_default_executor_without_one);
    tcase_add_test(tc, shutdown_default_executor_waits_while_the_loop_runs);
    tcase_add_test(tc, wrap_future_follows_the_cfuture_both_ways);
    tcase_add_test(tc, run_in_executor_on_closed_loop_refused);
    tcase_add_test(tc, loop_closed_while_default_executor_job_runs);
    tcase_add_test(tc, loop_freed_while_default_executor_job_runs);
    tcase_add_test(tc, loop_freed_while_own_executor_job_runs);
    suite_add_tcase(s, tc);
    tc = tcase_create("threadsafe");
    tcase_add_test(tc, run_coroutine_threadsafe_result_and_error);
    tcase_add_test(tc, run_coroutine_threadsafe_timeout_then_cancel);
    tcase_add_test(tc, run_coroutine_threadsafe_refusals);
    tcase_add_test(tc, run_coroutine_threadsafe_loop_closed_before_callback);
    tcase_add_test(tc, debug_mode_refuses_call_soon_from_another_thread);
    tcase_add_test(tc, no_debug_mode_no_thread_check);
    tcase_add_test(tc, debug_mode_refuses_create_task_from_another_thread);
    suite_add_tcase(s, tc);
    tc = tcase_create("oom");
    tcase_add_test(tc, oom_executor_submit);
    tcase_add_test(tc, oom_run_in_executor);
    tcase_add_test(tc, oom_run_coroutine_threadsafe);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(executor_suite());
}
