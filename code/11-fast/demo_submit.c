/* demo_submit.c -- article 003's cross-thread example, in C.
 *
 * The article runs the loop in a thread of its own and, from the main
 * thread, submits a coroutine with asyncio.run_coroutine_threadsafe() and
 * waits for its result with future.result(timeout=5).  Here the "coroutine"
 * is a function that returns 42, and the concurrent.futures.Future the
 * main thread waits on is the smallest future there is: a mutex, a
 * condition variable, a flag and a value.  Everything the main thread does
 * to the loop goes through loop_call_soon_threadsafe(), the stop included.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* @region future */
/* concurrent.futures.Future, reduced to what the example needs: one thread
 * sets the result, another waits for it. */
typedef struct future {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    bool done;
    int result;
} future_t;

static void future_init(future_t *f)
{
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->done_cv, NULL);
    f->done = false;
}

static void future_set_result(future_t *f, int result)
{
    pthread_mutex_lock(&f->lock);
    f->result = result;
    f->done = true;
    pthread_cond_broadcast(&f->done_cv);
    pthread_mutex_unlock(&f->lock);
}

/* future.result(timeout): 0 and *result, or ETIMEDOUT. */
static int future_result(future_t *f, double timeout, int *result)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* the clock pthread_cond_timedwait uses */
    until.tv_sec += (time_t)timeout;
    int rc = 0;
    pthread_mutex_lock(&f->lock);
    while (!f->done && rc == 0)
        rc = pthread_cond_timedwait(&f->done_cv, &f->lock, &until);
    if (f->done) {
        *result = f->result;
        rc = 0;
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}
/* @end future */

/* @region submit */
static pthread_t loop_thread;

typedef struct job {
    int (*fn)(void);
    future_t future;
    bool on_loop_thread;
} job_t;

static int async_task(void)
{
    return 42;
}

/* Runs on the loop's thread: run_coroutine_threadsafe's callback. */
static void run_job(loop_t *loop, void *arg)
{
    (void)loop;
    job_t *job = arg;
    job->on_loop_thread = pthread_equal(pthread_self(), loop_thread);
    future_set_result(&job->future, job->fn());
}

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* def run_loop(): loop.run_forever() */
static void *run_loop(void *arg)
{
    static int rc;
    rc = loop_run_forever(arg);
    return &rc;
}
/* @end submit */

int main(void)
{
    /* @region main */
    loop_t *loop = loop_new();
    if (loop == NULL || pthread_create(&loop_thread, NULL, run_loop, loop) != 0) {
        perror("demo_submit");
        return 1;
    }

    /* future = asyncio.run_coroutine_threadsafe(async_task(), loop) */
    job_t job = {.fn = async_task};
    future_init(&job.future);
    if (loop_call_soon_threadsafe(loop, run_job, &job) == NULL) {
        perror("call_soon_threadsafe");
        return 1;
    }
    printf("main thread: submitted async_task to the loop's thread\n");

    /* result = future.result(timeout=5) */
    int result = 0;
    if (future_result(&job.future, 5.0, &result) != 0) {
        printf("main thread: no result within 5 s\n");
        return 1;
    }
    printf("main thread: result = %d (computed on the loop's thread: %s)\n", result,
           job.on_loop_thread ? "yes" : "no");

    /* loop.call_soon_threadsafe(loop.stop), then join the loop's thread */
    loop_call_soon_threadsafe(loop, stop_cb, NULL);
    void *rc;
    pthread_join(loop_thread, &rc);
    printf("main thread: stopped the loop through call_soon_threadsafe; "
           "run_forever returned %d\n", *(int *)rc);
    loop_close(loop);
    loop_free(loop);
    /* @end main */
    pthread_cond_destroy(&job.future.done_cv);
    pthread_mutex_destroy(&job.future.lock);
    return 0;
}
