/* Exercise 1 (chapter 10): the thread pool's worker.
 *
 * Write the body of a worker thread of the executor, as _worker and
 * _WorkItem.run in concurrent/futures/thread.py (3.11) do it:
 *   - take the next job from the work queue, first in, first out, waiting
 *     while the queue is empty and the executor is not shut down;
 *   - set_running_or_notify_cancel() on its future: a job whose future was
 *     cancelled while it waited in the queue is not run (its future becomes
 *     CANCELLED_AND_NOTIFIED);
 *   - run the job, outside every lock, and set its future's result or its
 *     error;
 *   - then count yourself idle again, so that the next submit() reuses this
 *     thread instead of starting another (_idle_semaphore.release());
 *   - when the queue is empty and the executor is shut down, end, and let the
 *     other workers know.
 * The jobs here compute something from their argument (never the same two
 * runs), so a worker that does not run them cannot pass.
 */
#define _POSIX_C_SOURCE 200809L
#include "executor.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"

/* How long a test waits for what an answer does at once: 2 s, stretched as
 * Check's own timeout is under valgrind and the sanitizers. */
static double wait_limit(void)
{
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    double k = m != NULL ? atof(m) : 1.0;
    return 2.0 * (k >= 1.0 ? k : 1.0);
}
#define WAIT wait_limit()

/* ------------------------------------------------------------- jobs */
/* A job that squares its input and remembers which thread ran it; an
 * input divisible by 5 fails with ValueError('bad N'). */
typedef struct square {
    long in;
    long out;
    pthread_t thread;
} square_t;

static int square(void *arg, void **result, loop_exception_t *error)
{
    square_t *s = arg;
    s->thread = pthread_self();
    if (s->in % 5 == 0) {
        snprintf(error->type, sizeof error->type, "ValueError");
        snprintf(error->message, sizeof error->message, "bad %ld", s->in);
        return -1;
    }
    s->out = s->in * s->in;
    *result = &s->out;
    return 0;
}

/* A gate: jobs that wait until the test opens it, and count who started. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open;
static int gate_started;

static void gate_reset(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = 0;
    gate_started = 0;
    pthread_mutex_unlock(&gate_lock);
}

static int gated(void *arg, void **result, loop_exception_t *error)
{
    (void)error;
    pthread_mutex_lock(&gate_lock);
    gate_started++;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    *result = arg;
    return 0;
}

static void gate_release(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

/* Wait until n gated jobs have started (they run at once, in n threads). */
static void gate_wait_started(int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)WAIT;
    pthread_mutex_lock(&gate_lock);
    while (gate_started < n) {
        int rc = pthread_cond_timedwait(&gate_cond, &gate_lock, &until);
        ck_assert_msg(rc == 0, "only %d of %d gated jobs started", gate_started, n);
    }
    pthread_mutex_unlock(&gate_lock);
}

/* A job that writes its number in a shared log, in the order jobs ran. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char order[512];

static int logged(void *arg, void **result, loop_exception_t *error)
{
    (void)error;
    char item[16];
    snprintf(item, sizeof item, "%s%d", order[0] ? " " : "", *(int *)arg);
    pthread_mutex_lock(&log_lock);
    strncat(order, item, sizeof order - strlen(order) - 1);
    pthread_mutex_unlock(&log_lock);
    *result = arg;
    return 0;
}

static void order_reset(void)
{
    pthread_mutex_lock(&log_lock);
    order[0] = '\0';
    pthread_mutex_unlock(&log_lock);
}

/* ------------------------------------------------------------ tests */
START_TEST(every_job_gives_its_result_or_its_error)
{
    executor_t *ex = executor_new(3, "sq");
    ck_assert_ptr_nonnull(ex);
    enum { N = 24 };
    square_t s[N];
    cfuture_t *f[N];
    long base = (long)time(NULL) % 1000 + 11; /* other inputs on every run */
    for (int i = 0; i < N; i++) {
        s[i] = (square_t){.in = base + 3 * i};
        f[i] = executor_submit(ex, square, &s[i]);
        ck_assert_ptr_nonnull(f[i]);
    }
    for (int i = 0; i < N; i++) {
        void *value = NULL;
        loop_exception_t error;
        memset(&error, 0, sizeof error);
        if (s[i].in % 5 == 0) {
            ck_assert_int_eq(cfuture_result(f[i], WAIT, &value, &error), -1);
            ck_assert_int_eq(errno, EIO);
            ck_assert_str_eq(error.type, "ValueError");
            char want[32];
            snprintf(want, sizeof want, "bad %ld", s[i].in);
            ck_assert_str_eq(error.message, want);
            ck_assert_int_eq(cfuture_exception(f[i], 0, &error), 1);
        } else {
            ck_assert_msg(cfuture_result(f[i], WAIT, &value, &error) == 0,
                          "job %d: %s %s", i, error.type, error.message);
            ck_assert_ptr_eq(value, &s[i].out);
            ck_assert_int_eq(s[i].out, s[i].in * s[i].in);
        }
        ck_assert_int_eq(cfuture_get_state(f[i]), CFUTURE_FINISHED);
        /* A job runs in a worker, never in the thread that submitted it. */
        ck_assert(!pthread_equal(s[i].thread, pthread_self()));
    }
    for (int i = 0; i < N; i++)
        cfuture_release(f[i]);
    executor_free(ex);
}
END_TEST

START_TEST(one_worker_runs_jobs_in_the_order_submitted)
{
    executor_t *ex = executor_new(1, "fifo");
    ck_assert_ptr_nonnull(ex);
    gate_reset();
    order_reset();
    cfuture_t *g = executor_submit(ex, gated, NULL);
    ck_assert_ptr_nonnull(g);
    gate_wait_started(1); /* the worker is busy: the rest wait in the queue */
    enum { N = 9 };
    int id[N];
    cfuture_t *f[N];
    char want[512] = "";
    unsigned seed = (unsigned)time(NULL);
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        id[i] = (int)(seed >> 16) % 900 + 100; /* not 0 1 2 ...: a log of i fails */
        f[i] = executor_submit(ex, logged, &id[i]);
        ck_assert_ptr_nonnull(f[i]);
        ck_assert_int_eq(cfuture_running(f[i]), 0);
        char item[16];
        snprintf(item, sizeof item, "%s%d", i ? " " : "", id[i]);
        strcat(want, item);
    }
    gate_release();
    for (int i = 0; i < N; i++) {
        void *value = NULL;
        ck_assert_int_eq(cfuture_result(f[i], WAIT, &value, NULL), 0);
        ck_assert_ptr_eq(value, &id[i]);
        cfuture_release(f[i]);
    }
    pthread_mutex_lock(&log_lock);
    ck_assert_str_eq(order, want);
    pthread_mutex_unlock(&log_lock);
    ck_assert_int_eq(cfuture_result(g, WAIT, NULL, NULL), 0);
    cfuture_release(g);
    ck_assert_uint_eq(executor_threads(ex), 1);
    executor_free(ex);
}
END_TEST

START_TEST(a_job_cancelled_before_it_starts_never_runs)
{
    executor_t *ex = executor_new(1, "cancel");
    ck_assert_ptr_nonnull(ex);
    gate_reset();
    order_reset();
    cfuture_t *g = executor_submit(ex, gated, NULL);
    ck_assert_ptr_nonnull(g);
    gate_wait_started(1);
    int id[3] = {7, 8, 9};
    cfuture_t *f[3];
    for (int i = 0; i < 3; i++) {
        f[i] = executor_submit(ex, logged, &id[i]);
        ck_assert_ptr_nonnull(f[i]);
    }
    ck_assert_int_eq(cfuture_cancel(f[1]), 1);
    ck_assert_int_eq(cfuture_get_state(f[1]), CFUTURE_CANCELLED);
    /* The job that runs cannot be cancelled. */
    ck_assert_int_eq(cfuture_running(g), 1);
    ck_assert_int_eq(cfuture_cancel(g), 0);
    gate_release();
    ck_assert_int_eq(cfuture_result(f[2], WAIT, NULL, NULL), 0);
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0);
    pthread_mutex_lock(&log_lock);
    ck_assert_str_eq(order, "7 9");
    pthread_mutex_unlock(&log_lock);
    /* The worker found it cancelled and told its waiters. */
    ck_assert_int_eq(cfuture_get_state(f[1]), CFUTURE_CANCELLED_AND_NOTIFIED);
    loop_exception_t error;
    ck_assert_int_eq(cfuture_result(f[1], 0, NULL, &error), -1);
    ck_assert_int_eq(errno, ECANCELED);
    ck_assert_int_eq(cfuture_result(g, 0, NULL, NULL), 0);
    for (int i = 0; i < 3; i++)
        cfuture_release(f[i]);
    cfuture_release(g);
    executor_free(ex);
}
END_TEST

START_TEST(workers_start_only_when_none_is_idle)
{
    executor_t *ex = executor_new(16, "lazy");
    ck_assert_ptr_nonnull(ex);
    ck_assert_uint_eq(executor_threads(ex), 0); /* none before the first job */
    /* One job at a time: the worker that finished one is idle when the
     * next arrives (a short pause lets it get there), so it takes it. */
    square_t s[12];
    for (int i = 0; i < 12; i++) {
        s[i] = (square_t){.in = 2 * i + 1};
        if (s[i].in % 5 == 0)
            s[i].in += 2;
        cfuture_t *f = executor_submit(ex, square, &s[i]);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(cfuture_result(f, WAIT, NULL, NULL), 0);
        cfuture_release(f);
        nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    }
    unsigned after_serial = executor_threads(ex);
    ck_assert_msg(after_serial >= 1 && after_serial <= 3,
                  "12 jobs one after the other started %u workers", after_serial);
    /* Three jobs that must run at the same time need three workers. */
    gate_reset();
    cfuture_t *g[3];
    for (int i = 0; i < 3; i++) {
        g[i] = executor_submit(ex, gated, NULL);
        ck_assert_ptr_nonnull(g[i]);
    }
    gate_wait_started(3);
    ck_assert_uint_ge(executor_threads(ex), 3);
    ck_assert_uint_le(executor_threads(ex), after_serial + 3);
    gate_release();
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(cfuture_result(g[i], WAIT, NULL, NULL), 0);
        cfuture_release(g[i]);
    }
    executor_free(ex);
}
END_TEST

START_TEST(shutdown_lets_queued_jobs_run_then_the_workers_end)
{
    executor_t *ex = executor_new(2, "down");
    ck_assert_ptr_nonnull(ex);
    gate_reset();
    order_reset();
    cfuture_t *g = executor_submit(ex, gated, NULL);
    ck_assert_ptr_nonnull(g);
    gate_wait_started(1);
    int id[4] = {41, 42, 43, 44};
    cfuture_t *f[4];
    for (int i = 0; i < 4; i++) {
        f[i] = executor_submit(ex, logged, &id[i]);
        ck_assert_ptr_nonnull(f[i]);
    }
    /* shutdown(wait=False): no new jobs, but the queued ones still run. */
    ck_assert_int_eq(executor_shutdown(ex, 0, 0), 0);
    ck_assert_ptr_null(executor_submit(ex, logged, &id[0]));
    ck_assert_int_eq(errno, EPIPE);
    gate_release();
    /* shutdown(wait=True) returns when every worker has ended. */
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(cfuture_get_state(f[i]), CFUTURE_FINISHED);
        cfuture_release(f[i]);
    }
    ck_assert_int_eq(cfuture_done(g), 1);
    cfuture_release(g);
    pthread_mutex_lock(&log_lock);
    ck_assert_uint_eq(strlen(order), strlen("41 42 43 44"));
    pthread_mutex_unlock(&log_lock);
    executor_free(ex);
}
END_TEST

START_TEST(shutdown_with_cancel_futures_cancels_the_queue)
{
    executor_t *ex = executor_new(1, "drop");
    ck_assert_ptr_nonnull(ex);
    gate_reset();
    order_reset();
    cfuture_t *g = executor_submit(ex, gated, NULL);
    ck_assert_ptr_nonnull(g);
    gate_wait_started(1);
    int id[3] = {5, 6, 7};
    cfuture_t *f[3];
    for (int i = 0; i < 3; i++) {
        f[i] = executor_submit(ex, logged, &id[i]);
        ck_assert_ptr_nonnull(f[i]);
    }
    ck_assert_int_eq(executor_shutdown(ex, 0, 1), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(cfuture_cancelled(f[i]), 1);
    gate_release();
    ck_assert_int_eq(executor_shutdown(ex, 1, 0), 0);
    ck_assert_int_eq(cfuture_result(g, 0, NULL, NULL), 0);
    pthread_mutex_lock(&log_lock);
    ck_assert_str_eq(order, "");
    pthread_mutex_unlock(&log_lock);
    for (int i = 0; i < 3; i++)
        cfuture_release(f[i]);
    cfuture_release(g);
    executor_free(ex);
}
END_TEST

static Suite *worker_suite(void)
{
    Suite *s = suite_create("exercise 1: the worker");
    TCase *tc = tcase_create("worker");
    tcase_add_test(tc, every_job_gives_its_result_or_its_error);
    tcase_add_test(tc, one_worker_runs_jobs_in_the_order_submitted);
    tcase_add_test(tc, a_job_cancelled_before_it_starts_never_runs);
    tcase_add_test(tc, workers_start_only_when_none_is_idle);
    tcase_add_test(tc, shutdown_lets_queued_jobs_run_then_the_workers_end);
    tcase_add_test(tc, shutdown_with_cancel_futures_cancels_the_queue);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(worker_suite());
}
