/* check_stress.c -- threads meet tasks at volume (chapter 10).
 *
 * Written against chapter 10's executor.h and run against every later
 * stage.  Three loads, each counting per job id that nothing was lost and
 * nothing ran twice, and that every result is the one its job made:
 *   - 8 threads x N run_coroutine_threadsafe() into one loop running in a
 *     thread of its own; each thread keeps up to WINDOW coroutines in
 *     flight and waits on their cfutures (concurrent.futures' result());
 *   - N jobs through loop_run_in_executor() on the default executor,
 *     awaited by a task of the loop (what run_in_executor is for);
 *   - 4 threads x N/4 executor_submit() into one pool of 4 workers (the
 *     work queue under contention, no loop at all);
 *   - cancellations racing completions: 4 threads x N/4
 *     run_coroutine_threadsafe() cancelling every other cfuture at once
 *     (the task may not have started, may be at its yield, or done), and
 *     N executor jobs of which a second thread cancels every other one as
 *     soon as it is submitted: whatever cancel() answered, the outcome
 *     agrees with it, and a job cancelled never runs.
 * N is 100,000 (the sizes issue 11 asks for); the test prints what each
 * load took and its rate.  Under valgrind (the test drivers set CK_FORK=no
 * there) N is 2,000, under a sanitizer 10,000; STRESS_CALLS=N sets it.
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/10-threads -I tests/support tests/unit/check_stress.c \
 *      build/10-threads/libloop.a $(pkg-config --cflags --libs check) -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include "executor.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define NTHREADS 8      /* run_coroutine_threadsafe's callers */
#define NSUBMITTERS 4   /* executor_submit's callers */
#define WINDOW 512      /* in flight per caller */
#define WAIT 60.0       /* s: a lost job fails the test, it does not hang it */

static long stress_calls(void)
{
    const char *s = getenv("STRESS_CALLS");
    if (s != NULL && atol(s) > 0 && atol(s) <= 10000000L)
        return atol(s);
    const char *fork = getenv("CK_FORK");
    if (fork != NULL && strcmp(fork, "no") == 0)
        return 2000;
    if (SANITIZED)
        return 10000;
    return 100000;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(const char *what, long n, double seconds)
{
    printf("stress: %s: %ld in %.2f s (%.0f/s)\n", what, n, seconds,
           seconds > 0 ? (double)n / seconds : 0.0);
    fflush(stdout);
}

/* ---- 8 threads x N run_coroutine_threadsafe ------------------------------ */

static long calls;           /* N */
static int *coro_runs;       /* per id: written by the loop's thread only */
static atomic_long released; /* coroutine frames released */

/* async def job(id): runs[id] += 1; return id + 1 */
typedef struct job_coro {
    coro_t coro;
    long id;
} job_coro_t;

static void job_coro_release(coro_t *c)
{
    atomic_fetch_add(&released, 1);
    free(c);
}

static coro_status job_coro_step(coro_t *c)
{
    job_coro_t *j = (job_coro_t *)c;
    CORO_BEGIN(c);
    coro_runs[j->id]++;
    CORO_RETURN(c, (void *)(intptr_t)(j->id + 1));
    CORO_END(c);
}

struct caller {
    loop_t *loop;
    long first; /* its ids: first .. first + calls - 1 */
    long bad;   /* results that were not id + 1, or never came */
    char why[400];
};

static void *caller_main(void *arg)
{
    struct caller *c = arg;
    cfuture_t *window[WINDOW];
    for (long base = 0; base < calls; base += WINDOW) {
        long n = calls - base < WINDOW ? calls - base : WINDOW;
        for (long i = 0; i < n; i++) {
            job_coro_t *j = malloc(sizeof *j);
            if (j == NULL)
                abort();
            coro_init(&j->coro, job_coro_step, "job", job_coro_release);
            j->id = c->first + base + i;
            window[i] = loop_run_coroutine_threadsafe(c->loop, &j->coro);
            if (window[i] == NULL) {
                snprintf(c->why, sizeof c->why, "refused: %s", executor_last_error());
                free(j);
                c->bad++;
            }
        }
        for (long i = 0; i < n; i++) {
            if (window[i] == NULL)
                continue;
            void *value = NULL;
            loop_exception_t e;
            if (cfuture_result(window[i], WAIT, &value, &e) < 0 ||
                (intptr_t)value != c->first + base + i + 1) {
                if (c->bad++ == 0)
                    snprintf(c->why, sizeof c->why, "id %ld: %s %s", c->first + base + i, e.type,
                             e.message);
            }
            cfuture_release(window[i]);
        }
    }
    return NULL;
}

static void *loop_main(void *arg)
{
    loop_t *loop = arg;
    ck_assert_int_eq(loop_run_forever(loop), 0);
    return NULL;
}

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

START_TEST(run_coroutine_threadsafe_from_8_threads)
{
    calls = stress_calls();
    long total = NTHREADS * calls;
    coro_runs = calloc((size_t)total, sizeof *coro_runs);
    ck_assert_ptr_nonnull(coro_runs);
    atomic_store(&released, 0);
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    pthread_t loop_thread, threads[NTHREADS];
    struct caller callers[NTHREADS];
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, loop_main, loop), 0);
    double t0 = now();
    for (int i = 0; i < NTHREADS; i++) {
        callers[i] = (struct caller){loop, i * calls, 0, ""};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, caller_main, &callers[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++)
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    double took = now() - t0;
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, stop_cb, NULL));
    ck_assert_int_eq(pthread_join(loop_thread, NULL), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    char what[80];
    snprintf(what, sizeof what, "%d threads x %ld run_coroutine_threadsafe", NTHREADS, calls);
    report(what, total, took);
    for (int i = 0; i < NTHREADS; i++)
        ck_assert_msg(callers[i].bad == 0, "thread %d: %ld lost or wrong (%s)", i, callers[i].bad,
                      callers[i].why);
    long lost = 0, twice = 0;
    for (long id = 0; id < total; id++) {
        lost += coro_runs[id] == 0;
        twice += coro_runs[id] > 1;
    }
    free(coro_runs);
    ck_assert_msg(lost == 0 && twice == 0, "%ld coroutines never ran, %ld ran twice", lost, twice);
    ck_assert_int_eq(atomic_load(&released), total);
}
END_TEST

/* ---- N jobs through run_in_executor, awaited by a task ------------------- */

static atomic_int *job_runs;

/* def job(id): runs[id] += 1; return 3 * id + 1 */
static int stress_job(void *arg, void **result, loop_exception_t *error)
{
    (void)error;
    intptr_t id = (intptr_t)arg;
    atomic_fetch_add(&job_runs[id], 1);
    *result = (void *)(3 * id + 1);
    return 0;
}

/* async def main():
 *     for base in range(0, N, WINDOW):
 *         futs = [loop.run_in_executor(None, job, base + i) for i in range(WINDOW)]
 *         for i, f in enumerate(futs): assert await f == 3 * (base + i) + 1 */
typedef struct driver {
    coro_t coro;
    long base, n, i, bad;
    future_t *futs[WINDOW];
} driver_t;

static coro_status driver_step(coro_t *c)
{
    driver_t *d = (driver_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    for (d->base = 0; d->base < calls; d->base += WINDOW) {
        d->n = calls - d->base < WINDOW ? calls - d->base : WINDOW;
        for (d->i = 0; d->i < d->n; d->i++) {
            d->futs[d->i] = loop_run_in_executor(loop, NULL, stress_job,
                                                 (void *)(intptr_t)(d->base + d->i));
            if (d->futs[d->i] == NULL)
                CORO_RAISE(c, "RuntimeError", "job %ld refused: %s", d->base + d->i,
                           loop_error(loop));
        }
        for (d->i = 0; d->i < d->n; d->i++) {
            CORO_TRY_AWAIT(c, d->futs[d->i]);
            if (c->failed || (intptr_t)c->value != 3 * (d->base + d->i) + 1)
                d->bad++;
            coro_clear_error(c);
            future_release(d->futs[d->i]);
            d->futs[d->i] = NULL;
        }
    }
    CORO_RETURN(c, (void *)(intptr_t)d->bad);
    CORO_END(c);
}

START_TEST(run_in_executor_jobs)
{
    calls = stress_calls();
    job_runs = calloc((size_t)calls, sizeof *job_runs);
    ck_assert_ptr_nonnull(job_runs);
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    driver_t *d = calloc(1, sizeof *d);
    ck_assert_ptr_nonnull(d);
    coro_init(&d->coro, driver_step, "main", NULL);
    double t0 = now();
    task_t *t = loop_create_task(loop, &d->coro);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    double took = now() - t0;
    void *bad = NULL;
    loop_exception_t e;
    int rc = future_result(task_future(t), &bad, &e);
    task_release(t);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    free(d);
    report("run_in_executor jobs (default executor)", calls, took);
    ck_assert_msg(rc == 0, "%s: %s", e.type, e.message);
    ck_assert_msg(bad == NULL, "%ld wrong results", (long)(intptr_t)bad);
    long lost = 0, twice = 0;
    for (long id = 0; id < calls; id++) {
        lost += atomic_load(&job_runs[id]) == 0;
        twice += atomic_load(&job_runs[id]) > 1;
    }
    free(job_runs);
    ck_assert_msg(lost == 0 && twice == 0, "%ld jobs never ran, %ld ran twice", lost, twice);
}
END_TEST

/* ---- 4 threads x N/4 executor_submit into one pool ---------------------- */

struct submitter {
    executor_t *ex;
    long first, n, bad;
    char why[400];
};

static void *submitter_main(void *arg)
{
    struct submitter *s = arg;
    cfuture_t *window[WINDOW];
    for (long base = 0; base < s->n; base += WINDOW) {
        long n = s->n - base < WINDOW ? s->n - base : WINDOW;
        for (long i = 0; i < n; i++) {
            window[i] = executor_submit(s->ex, stress_job, (void *)(intptr_t)(s->first + base + i));
            if (window[i] == NULL && s->bad++ == 0)
                snprintf(s->why, sizeof s->why, "refused: %s", executor_last_error());
        }
        for (long i = 0; i < n; i++) {
            if (window[i] == NULL)
                continue;
            void *value = NULL;
            loop_exception_t e;
            if (cfuture_result(window[i], WAIT, &value, &e) < 0 ||
                (intptr_t)value != 3 * (s->first + base + i) + 1) {
                if (s->bad++ == 0)
                    snprintf(s->why, sizeof s->why, "id %ld: %s %s", s->first + base + i, e.type,
                             e.message);
            }
            cfuture_release(window[i]);
        }
    }
    return NULL;
}

START_TEST(executor_submit_from_4_threads)
{
    calls = stress_calls();
    job_runs = calloc((size_t)calls, sizeof *job_runs);
    ck_assert_ptr_nonnull(job_runs);
    executor_t *ex = executor_new(4, "stress");
    ck_assert_ptr_nonnull(ex);
    pthread_t threads[NSUBMITTERS];
    struct submitter subs[NSUBMITTERS];
    long per = calls / NSUBMITTERS;
    double t0 = now();
    for (int i = 0; i < NSUBMITTERS; i++) {
        long n = i == NSUBMITTERS - 1 ? calls - per * i : per;
        subs[i] = (struct submitter){ex, per * i, n, 0, ""};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, submitter_main, &subs[i]), 0);
    }
    for (int i = 0; i < NSUBMITTERS; i++)
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    double took = now() - t0;
    ck_assert_uint_le(executor_threads(ex), 4);
    executor_free(ex);
    report("executor_submit jobs from 4 threads, 4 workers", calls, took);
    for (int i = 0; i < NSUBMITTERS; i++)
        ck_assert_msg(subs[i].bad == 0, "submitter %d: %ld lost or wrong (%s)", i, subs[i].bad,
                      subs[i].why);
    long lost = 0, twice = 0;
    for (long id = 0; id < calls; id++) {
        lost += atomic_load(&job_runs[id]) == 0;
        twice += atomic_load(&job_runs[id]) > 1;
    }
    free(job_runs);
    ck_assert_msg(lost == 0 && twice == 0, "%ld jobs never ran, %ld ran twice", lost, twice);
}
END_TEST

/* ---- cancellations racing completions ---------------------------------- */

/* async def job(id): await asyncio.sleep(0); runs[id] += 1; return id + 1
 * -- one yield, so that a cancel from the caller's thread can find the task
 * before its first step, at its yield, or done. */
typedef struct yield_coro {
    coro_t coro;
    long id;
} yield_coro_t;

static coro_status yield_coro_step(coro_t *c)
{
    yield_coro_t *j = (yield_coro_t *)c;
    CORO_BEGIN(c);
    CORO_YIELD(c);
    coro_runs[j->id]++;
    CORO_RETURN(c, (void *)(intptr_t)(j->id + 1));
    CORO_END(c);
}

static void *cancelling_caller_main(void *arg)
{
    struct caller *c = arg;
    cfuture_t *window[WINDOW];
    int cancelled[WINDOW];
    for (long base = 0; base < calls; base += WINDOW) {
        long n = calls - base < WINDOW ? calls - base : WINDOW;
        for (long i = 0; i < n; i++) {
            yield_coro_t *j = malloc(sizeof *j);
            if (j == NULL)
                abort();
            coro_init(&j->coro, yield_coro_step, "job", job_coro_release);
            j->id = c->first + base + i;
            window[i] = loop_run_coroutine_threadsafe(c->loop, &j->coro);
            if (window[i] == NULL)
                abort();
            /* every other one is cancelled at once, racing the loop's thread */
            cancelled[i] = (i & 1) ? cfuture_cancel(window[i]) : 0;
        }
        for (long i = 0; i < n; i++) {
            long id = c->first + base + i;
            void *value = NULL;
            loop_exception_t e;
            int rc = cfuture_result(window[i], WAIT, &value, &e);
            int err = errno;
            /* cancel() said 1: it ends cancelled; said 0: finished, its result */
            int ok = cancelled[i] ? rc < 0 && err == ECANCELED
                                  : rc == 0 && (intptr_t)value == id + 1;
            if (!ok && c->bad++ == 0)
                snprintf(c->why, sizeof c->why, "id %ld: cancel said %d, result rc %d (%s %s)",
                         id, cancelled[i], rc, rc < 0 ? e.type : "", rc < 0 ? e.message : "");
            cfuture_release(window[i]);
        }
    }
    return NULL;
}

START_TEST(run_coroutine_threadsafe_cancelled_from_4_threads)
{
    calls = stress_calls() / 4;
    long total = 4 * calls;
    coro_runs = calloc((size_t)total, sizeof *coro_runs);
    ck_assert_ptr_nonnull(coro_runs);
    atomic_store(&released, 0);
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    pthread_t loop_thread, threads[4];
    struct caller callers[4];
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, loop_main, loop), 0);
    double t0 = now();
    for (int i = 0; i < 4; i++) {
        callers[i] = (struct caller){loop, i * calls, 0, ""};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, cancelling_caller_main, &callers[i]),
                         0);
    }
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    double took = now() - t0;
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, stop_cb, NULL));
    ck_assert_int_eq(pthread_join(loop_thread, NULL), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    report("4 threads run_coroutine_threadsafe, every other one cancelled", total, took);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(callers[i].bad == 0, "thread %d: %ld wrong (%s)", i, callers[i].bad,
                      callers[i].why);
    long twice = 0, uncancelled_lost = 0;
    for (long id = 0; id < total; id++) {
        twice += coro_runs[id] > 1;
        uncancelled_lost += (id % WINDOW) % 2 == 0 && coro_runs[id] != 1;
    }
    free(coro_runs);
    ck_assert_msg(twice == 0 && uncancelled_lost == 0, "%ld ran twice, %ld not cancelled and lost",
                  twice, uncancelled_lost);
    ck_assert_int_eq(atomic_load(&released), total); /* every frame released once */
}
END_TEST

/* executor jobs, every other one cancelled by a second thread as soon as it
 * is submitted: each job either ran once and its future FINISHED, or never
 * ran and its future is cancelled. */
struct canceller {
    cfuture_t **futures;
    long n;
    int *said;             /* what cancel() said, per job */
};

/* The submitter hands each future over under a mutex (not an atomic
 * counter: helgrind would not see the hand-over, and report the
 * canceller's first use of the future as a race). */
static pthread_mutex_t published_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t published_cv = PTHREAD_COND_INITIALIZER;
static long published; /* how many futures the submitter has published */

static void *canceller_main(void *arg)
{
    struct canceller *k = arg;
    for (long i = 1; i < k->n; i += 2) {
        pthread_mutex_lock(&published_mu);
        while (published <= i)
            pthread_cond_wait(&published_cv, &published_mu);
        pthread_mutex_unlock(&published_mu);
        k->said[i] = cfuture_cancel(k->futures[i]);
    }
    return NULL;
}

START_TEST(executor_jobs_cancelled_from_another_thread)
{
    calls = stress_calls();
    job_runs = calloc((size_t)calls, sizeof *job_runs);
    cfuture_t **futures = calloc((size_t)calls, sizeof *futures);
    int *said = calloc((size_t)calls, sizeof *said);
    ck_assert(job_runs != NULL && futures != NULL && said != NULL);
    published = 0;
    executor_t *ex = executor_new(2, "stress");
    struct canceller k = {futures, calls, said};
    pthread_t t;
    double t0 = now();
    ck_assert_int_eq(pthread_create(&t, NULL, canceller_main, &k), 0);
    for (long i = 0; i < calls; i++) {
        futures[i] = executor_submit(ex, stress_job, (void *)(intptr_t)i);
        ck_assert_ptr_nonnull(futures[i]);
        pthread_mutex_lock(&published_mu);
        published = i + 1;
        pthread_cond_signal(&published_cv);
        pthread_mutex_unlock(&published_mu);
    }
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    executor_free(ex); /* every job not cancelled has run */
    double took = now() - t0;
    report("executor jobs, every other one cancelled from another thread", calls, took);
    long wrong = 0, cancelled = 0;
    for (long i = 0; i < calls; i++) {
        int runs = atomic_load(&job_runs[i]);
        cfuture_state st = cfuture_get_state(futures[i]);
        int is_cancelled = st == CFUTURE_CANCELLED || st == CFUTURE_CANCELLED_AND_NOTIFIED;
        cancelled += is_cancelled;
        if (is_cancelled ? runs != 0 || !said[i] : runs != 1 || st != CFUTURE_FINISHED || said[i])
            wrong++;
        cfuture_release(futures[i]);
    }
    free(futures);
    free(said);
    free(job_runs);
    printf("stress: %ld of %ld jobs cancelled before they started\n", cancelled, calls);
    ck_assert_msg(wrong == 0, "%ld jobs whose run count disagrees with their future", wrong);
}
END_TEST

static Suite *stress_suite(void)
{
    Suite *s = suite_create("stress");
    TCase *tc = tcase_create("stress");
    tcase_set_timeout(tc, 120); /* x CK_TIMEOUT_MULTIPLIER under sanitizers and valgrind */
    tcase_add_test(tc, run_coroutine_threadsafe_from_8_threads);
    tcase_add_test(tc, run_in_executor_jobs);
    tcase_add_test(tc, executor_submit_from_4_threads);
    tcase_add_test(tc, run_coroutine_threadsafe_cancelled_from_4_threads);
    tcase_add_test(tc, executor_jobs_cancelled_from_another_thread);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(stress_suite());
}
