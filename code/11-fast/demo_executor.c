/* demo_executor.c -- chapter 10: article 004's 9.5 (事件循环阻塞导致超时不准),
 * before and after.
 *
 *   1. A heartbeat every 0.1 s, and a request that at 0.22 s does 0.35 s of
 *      blocking work in its coroutine: the loop is stuck until 0.57, the
 *      beat due at 0.30 comes 270 ms late, and every beat after it shifts.
 *   2. The same work through loop_run_in_executor: a pool thread does it,
 *      the loop goes on, every beat is on time, the result is home at 0.57.
 *   3. 9.5's own program:
 *          async def blocked_coro():
 *              time.sleep(5)
 *          await asyncio.wait_for(blocked_coro(), timeout=1)
 *      The timeout cannot fire while the loop is blocked; when the loop
 *      runs again, at 5 s, the coroutine is done and wait_for returns its
 *      result: 3.11 prints no 超时.
 *   4. The fix: the sleep in the executor.  超时 at 1 s -- but a thread
 *      cannot be cancelled, so asyncio.run returns at 5 s, when its
 *      shutdown_default_executor has waited for the job.
 *
 * One job, work(): it computes, then takes its time.  All runs are on a
 * virtual clock, so the trace is the same on every run.  Work done in the
 * loop's thread moves the clock by its length (as chapter 08's `block`
 * does).  Work in a pool thread waits on a gate instead, which the loop's
 * wait hook opens when the virtual clock reaches the work's end; the hook
 * then has the selector block for real until the job's result has come
 * home through call_soon_threadsafe (the self-pipe).  And before the loop
 * waits at all, a pool thread has picked the job up: whether wait_for's
 * cancellation in 4 finds the job still queued (and so cancels it) or
 * already running (and cannot) must not depend on how fast a thread
 * starts.  With real threads and real time, when the result arrives among
 * the beats would vary from run to run; this way the other thread acts at
 * fixed moments, and all the scheduling is the loop's.  Python twin: tests/conformance/runs/executor.py.
 */
#define _POSIX_C_SOURCE 200809L
#include "demo_ticks.h"
#include "executor.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ the job */
/* @region work */
typedef struct work {
    long n;               /* the sum of the squares below n ... */
    double seconds;       /* ... takes this long */
    loop_t *loop;         /* done in this loop's thread: it moves its clock */
    double ends_at;       /* done in a pool thread: it says it started, and */
    pthread_mutex_t lock; /*   waits for the loop's hook to open its gate, */
    pthread_cond_t changed; /* at this virtual time */
    int started, gate;
} work_t;

static int work(void *arg, void **result, loop_exception_t *error)
{
    (void)error;
    work_t *w = arg;
    long total = 0;
    for (long i = 0; i < w->n; i++)
        total += i * i;
    if (w->loop != NULL) { /* time.sleep(seconds), on the virtual clock */
        loop_set_time(w->loop, loop_time(w->loop) + w->seconds);
    } else {
        pthread_mutex_lock(&w->lock);
        w->started = 1;
        pthread_cond_broadcast(&w->changed);
        while (!w->gate)
            pthread_cond_wait(&w->changed, &w->lock);
        pthread_mutex_unlock(&w->lock);
    }
    *result = (void *)(intptr_t)total;
    return 0;
}
/* @end work */

static void work_init(work_t *w, long n, double seconds)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    w->seconds = seconds;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->changed, NULL);
}

static void work_destroy(work_t *w)
{
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
}

/* -------------------------------------------------------- the wait hook */
static work_t *job; /* the work a pool thread is doing (the loop's thread's) */

/* @region hook */
/* demo_ticks.h's count_tick, which also stands for the pool thread's work. */
static double executor_wait(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    ticks++;
    if (job != NULL) {
        pthread_mutex_lock(&job->lock);
        while (!job->started) /* a pool thread has picked the job up */
            pthread_cond_wait(&job->changed, &job->lock);
        pthread_mutex_unlock(&job->lock);
    }
    if (job != NULL && (timeout < 0 || loop_time(loop) + timeout >= job->ends_at)) {
        loop_set_time(loop, job->ends_at); /* the work is done now: */
        pthread_mutex_lock(&job->lock);
        job->gate = 1;
        pthread_cond_broadcast(&job->changed);
        pthread_mutex_unlock(&job->lock);
        job = NULL;
        return -1; /* block until its result comes home */
    }
    if (timeout < 0)
        return -1; /* only a pool thread can wake it: wait for real */
    loop_set_time(loop, loop_time(loop) + timeout);
    return 0;
}
/* @end hook */

/* ------------------------------------------------------- the coroutines */
typedef struct heartbeat {
    coro_t coro;
    int beats, i;
    double due;
    sleep_t sleep;
} heartbeat_t;

/* @region heartbeat */
static coro_status heartbeat_step(coro_t *c) /* a beat every 0.1 s: is it on time? */
{
    heartbeat_t *h = (heartbeat_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    h->due = loop_time(loop);
    for (h->i = 1; h->i <= h->beats; h->i++) {
        double late = loop_time(loop) - h->due;
        if (late < 0.0005)
            say(loop, "beat %2d", h->i);
        else
            say(loop, "beat %2d  due at %.3f: %3.0f ms late", h->i, h->due, late * 1000);
        h->due = loop_time(loop) + 0.1;
        CORO_CALL(c, sleep_init(&h->sleep, 0.1));
    }
    CORO_END(c);
}
/* @end heartbeat */

typedef struct request {
    coro_t coro;
    int in_executor;
    sleep_t sleep;
    work_t work;
    future_t *future;
} request_t;

/* @region request */
static coro_status request_step(coro_t *c)
{
    request_t *r = (request_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    CORO_CALL(c, sleep_init(&r->sleep, 0.22));
    work_init(&r->work, 1000, 0.35);
    if (r->in_executor) {
        say(loop, "request: 0.35 s of work, in the executor");
        r->work.ends_at = loop_time(loop) + r->work.seconds;
        job = &r->work;
        /* total = await loop.run_in_executor(None, work, w) */
        r->future = loop_run_in_executor(loop, NULL, work, &r->work);
        if (r->future == NULL)
            CORO_RAISE(c, "RuntimeError", "%s", loop_error(loop));
        CORO_TRY_AWAIT(c, r->future);
        future_release(r->future);
        if (c->failed)
            CORO_RERAISE(c);
    } else {
        say(loop, "request: 0.35 s of work, in the coroutine");
        r->work.loop = loop;
        loop_exception_t error;
        work(&r->work, &c->value, &error); /* total = work(w): the loop waits */
    }
    work_destroy(&r->work);
    say(loop, "request: done, %ld", (long)(intptr_t)c->value);
    CORO_END(c);
}
/* @end request */

typedef struct beats_and_request {
    coro_t coro;
    heartbeat_t heartbeat;
    task_t *beats;
    request_t request;
} beats_and_request_t;

static coro_status beats_and_request_step(coro_t *c)
{
    beats_and_request_t *m = (beats_and_request_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    m->heartbeat.beats = 8;
    m->beats = loop_create_task(loop, coro_init(&m->heartbeat.coro, heartbeat_step,
                                                "heartbeat", NULL));
    if (m->beats == NULL)
        CORO_RAISE(c, "MemoryError", "%s", loop_error(loop));
    CORO_TRY_CALL(c, coro_init(&m->request.coro, request_step, "request", NULL));
    if (!c->failed)
        CORO_TRY_AWAIT(c, task_future(m->beats));
    task_release(m->beats);
    if (c->failed)
        CORO_RERAISE(c);
    CORO_END(c);
}

/* 9.5, as printed */
typedef struct blocked {
    coro_t coro;
    work_t work;
} blocked_t;

/* @region blocked_coro */
static coro_status blocked_coro_step(coro_t *c) /* async def blocked_coro(): */
{
    blocked_t *b = (blocked_t *)c;
    CORO_BEGIN(c);
    work_init(&b->work, 0, 5);
    b->work.loop = loop_get_running_loop();
    void *ignored;
    loop_exception_t error;
    work(&b->work, &ignored, &error); /* time.sleep(5) */
    work_destroy(&b->work);
    CORO_END(c);                      /* return */
}
/* @end blocked_coro */

typedef struct main_frame {
    coro_t coro;
    blocked_t blocked;
    work_t work;
    future_t *inner;  /* what wait_for waits on: a task, or the executor's future */
    wait_for_t wait_for;
} main_t;

/* @region main */
static coro_status main_9_5_step(coro_t *c) /* async def main(): */
{
    main_t *m = (main_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    task_t *t = loop_create_task(loop, coro_init(&m->blocked.coro, blocked_coro_step,
                                                 "blocked_coro", NULL));
    if (t == NULL)
        CORO_RAISE(c, "MemoryError", "%s", loop_error(loop));
    m->inner = task_future(t);
    /* try: await asyncio.wait_for(blocked_coro(), timeout=1) */
    CORO_TRY_CALL(c, wait_for_init(&m->wait_for, m->inner, 1));
    future_release(m->inner);
    if (!c->failed) {
        say(loop, "wait_for returned %s: no 超时", c->value == NULL ? "None" : "a value");
    } else if (strcmp(c->error.type, "TimeoutError") == 0) { /* except TimeoutError: */
        say(loop, "超时");
        coro_clear_error(c);
    } else {
        CORO_RERAISE(c);
    }
    CORO_END(c);
}
/* @end main */

/* @region main_fixed */
static coro_status main_fixed_step(coro_t *c) /* the fix: the sleep in the executor */
{
    main_t *m = (main_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    work_init(&m->work, 0, 5);
    m->work.ends_at = loop_time(loop) + m->work.seconds;
    job = &m->work;
    m->inner = loop_run_in_executor(loop, NULL, work, &m->work);
    if (m->inner == NULL)
        CORO_RAISE(c, "RuntimeError", "%s", loop_error(loop));
    /* try: await asyncio.wait_for(loop.run_in_executor(None, time.sleep, 5), timeout=1) */
    CORO_TRY_CALL(c, wait_for_init(&m->wait_for, m->inner, 1));
    future_release(m->inner);
    if (!c->failed) {
        say(loop, "wait_for returned %s: no 超时", c->value == NULL ? "None" : "a value");
    } else if (strcmp(c->error.type, "TimeoutError") == 0) {
        say(loop, "超时");
        coro_clear_error(c);
    } else {
        CORO_RERAISE(c);
    }
    CORO_END(c);
}
/* @end main_fixed */

/* asyncio.run(main) on a virtual loop with the hook; the time it returns at. */
static int run(const char *title, coro_t *main)
{
    printf("-- %s\n", title);
    loop_t *loop = loop_new_virtual();
    if (loop == NULL)
        return perror("loop_new_virtual"), -1;
    loop_set_wait_hook(loop, executor_wait, NULL);
    ticks = 0;
    void *result;
    loop_exception_t error;
    int rc = loop_run_main_on(loop, main, &result, &error);
    if (rc == 0)
        printf("asyncio.run returned at %.3f\n", loop_time(loop));
    else
        printf("asyncio.run raised %s: %s\n", error.type, error.message);
    loop_free(loop);
    return rc;
}

int main(void)
{
    static beats_and_request_t blocking, in_executor;
    static main_t main_9_5, fixed;
    in_executor.request.in_executor = 1;
    int failed = 0;
    failed |= run("the work blocks the loop",
                  coro_init(&blocking.coro, beats_and_request_step, "main", NULL));
    failed |= run("the same work in the executor",
                  coro_init(&in_executor.coro, beats_and_request_step, "main", NULL));
    failed |= run("article 004, 9.5: wait_for(blocked_coro(), timeout=1)",
                  coro_init(&main_9_5.coro, main_9_5_step, "main", NULL));
    failed |= run("the fix: wait_for(loop.run_in_executor(None, time.sleep, 5), timeout=1)",
                  coro_init(&fixed.coro, main_fixed_step, "main", NULL));
    work_destroy(&fixed.work);
    return failed != 0;
}
