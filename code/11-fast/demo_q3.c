/* demo_q3.c -- chapter 10: article 004's exercise 3 (题目3, 跨线程提交任务).
 *
 *   - The main thread runs a loop with a heartbeat task: 心跳 every second.
 *   - A worker thread, 5 seconds in, hands the loop a coroutine with
 *     run_coroutine_threadsafe: it prints 来自子线程 and returns 42, which
 *     the worker gets from the concurrent future (cfuture_result) and prints.
 *   - At 10 seconds the main thread stops the loop (loop.stop(), from a
 *     timer: the loop's own thread is the one that may call it), then closes
 *     it properly: cancel the heartbeat and run it to its end, join the
 *     worker, and only then close.
 * Then the mistake the exercise warns of (避免事件循环提前关闭): the loop
 * stopped at 3 seconds and closed before the worker's 5 are up: its
 * submission is refused, "Event loop is closed".
 *
 * Why the worker's 5 seconds are virtual.  With a real sleep(5) in the
 * worker, its submission lands wherever the OS schedules it (in the tick of
 * the heartbeat at 5 s or in the next one), and its printf anywhere among
 * the loop's lines: the trace would differ from run to run and could only
 * be compared loosely.  So the loop's wait hook does the worker's waiting
 * too: when the virtual clock is about to reach t=5, it sets the clock to
 * 5, opens the worker's gate and waits (a condition variable) until the
 * worker's call_soon_threadsafe has been made; and once the concurrent
 * future is done, the next wait waits until the worker has printed what it
 * got.  The loop's scheduling is untouched; only the moments at which the
 * other thread acts are fixed.  Python twin: tests/conformance/runs/q3.py.
 * `demo_q3 --real` runs the same with real sleeps, ten times faster (to
 * watch; not pinned): the lines then come in whatever order the threads
 * make them.
 */
#define _POSIX_C_SOURCE 200809L
#include "demo_ticks.h"
#include "executor.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int real;             /* --real: real clock, real sleeps */
static double scale = 1.0;   /* --real: every delay ten times shorter */

/* The line of the loop's thread: virtual time and tick, as every demo of
 * chapter 09 prints it; with --real, the seconds since the start. */
static double t0;
static void show(loop_t *loop, const char *text)
{
    if (real)
        printf("%6.3f  %s\n", (loop_time(loop) - t0) / scale, text);
    else
        say(loop, "%s", text);
}

/* The worker's lines: no time (the loop's clock is the loop thread's). */
static void worker_says(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void worker_says(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("        worker   ");
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
}

/* ------------------------------------------------------- the coroutines */
typedef struct heartbeat {
    coro_t coro;
    sleep_t sleep;
} heartbeat_t;

/* @region heartbeat */
static coro_status heartbeat_step(coro_t *c) /* async def heartbeat(): */
{
    heartbeat_t *h = (heartbeat_t *)c;
    CORO_BEGIN(c);
    for (;;) {                                               /* while True: */
        show(loop_get_running_loop(), "心跳");
        CORO_TRY_CALL(c, sleep_init(&h->sleep, 1 * scale)); /*   await asyncio.sleep(1) */
        if (c->failed) {
            if (strcmp(c->error.type, "CancelledError") == 0)
                show(loop_get_running_loop(), "heartbeat: cancelled");
            CORO_RERAISE(c);
        }
    }
    CORO_END(c);
}
/* @end heartbeat */

/* @region from_worker */
static coro_status from_worker_step(coro_t *c) /* the coroutine the worker hands over */
{
    CORO_BEGIN(c);
    show(loop_get_running_loop(), "来自子线程");
    CORO_RETURN(c, (void *)(intptr_t)42);
    CORO_END(c);
}
/* @end from_worker */

/* ----------------------------------------------------------- the worker */
/* What the two threads share: three one-way signals under one mutex, and
 * the concurrent future.  (Python's twin: three threading.Events.) */
typedef struct worker {
    loop_t *loop;
    double wakes_at;      /* its sleep(5), on the loop's clock */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int gate;             /* 1: its 5 seconds are up */
    int submitted;        /* 1: run_coroutine_threadsafe returned */
    int printed;          /* 1: it printed what cfuture_result gave it */
    cfuture_t *cf;        /* the future it waits on (its reference) */
    coro_t from_worker;   /* the coroutine's frame: the loop's once handed over */
} worker_t;

static void signal_set(worker_t *w, int *flag)
{
    pthread_mutex_lock(&w->lock);
    *flag = 1;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
}

static void signal_wait(worker_t *w, const int *flag) /* with w->lock held */
{
    while (!*flag)
        pthread_cond_wait(&w->changed, &w->lock);
}

/* @region worker */
static void *worker_main(void *arg)
{
    worker_t *w = arg;
    if (real) { /* time.sleep(5) */
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(5 * scale * 1e9)};
        nanosleep(&ts, NULL);
    } else {    /* ... on the virtual clock: the loop's wait hook opens the gate */
        pthread_mutex_lock(&w->lock);
        signal_wait(w, &w->gate);
        pthread_mutex_unlock(&w->lock);
    }
    coro_init(&w->from_worker, from_worker_step, "from_worker", NULL);
    cfuture_t *cf = loop_run_coroutine_threadsafe(w->loop, &w->from_worker);
    if (cf == NULL) { /* refused: Python raises RuntimeError; the coroutine is still ours */
        worker_says("run_coroutine_threadsafe raised RuntimeError: %s", executor_last_error());
        signal_set(w, &w->submitted);
        return NULL;
    }
    worker_says("submitted from_worker()");
    pthread_mutex_lock(&w->lock);
    w->cf = cf;
    pthread_mutex_unlock(&w->lock);
    signal_set(w, &w->submitted); /* (after the print: the loop goes on now) */
    void *value;
    loop_exception_t error;
    if (cfuture_result(cf, -1, &value, &error) == 0) /* cf.result(): blocks this thread */
        worker_says("result() returned %d", (int)(intptr_t)value);
    else
        worker_says("result() raised %s: %s", error.type, error.message);
    signal_set(w, &w->printed);
    return NULL;
}
/* @end worker */

/* ------------------------------------------------------- the wait hook */
/* demo_ticks.h's count_tick, which also stands for the worker's sleep. */
static double q3_wait(loop_t *loop, double timeout, void *ctx)
{
    worker_t *w = ctx;
    ticks++;
    if (timeout < 0) {  /* nothing could ever wake it: a bug in the demo */
        loop_stop(loop);
        return 0;
    }
    pthread_mutex_lock(&w->lock);
    if (w->cf != NULL && cfuture_done(w->cf))
        signal_wait(w, &w->printed);    /* it got its result: let it print first */
    if (!w->gate && loop_time(loop) + timeout >= w->wakes_at) {
        loop_set_time(loop, w->wakes_at); /* the worker's 5 seconds are up */
        w->gate = 1;
        pthread_cond_broadcast(&w->changed);
        signal_wait(w, &w->submitted);  /* its call_soon_threadsafe has been made */
    } else {
        loop_set_time(loop, loop_time(loop) + timeout);
    }
    pthread_mutex_unlock(&w->lock);
    return 0; /* the selector only looks: the self-pipe is readable if it wrote */
}

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* @region run */
static int run(double stop_at, int join_before_close)
{
    worker_t w = {.wakes_at = 5 * scale};
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.changed, NULL);
    w.loop = real ? loop_new() : loop_new_virtual();
    if (w.loop == NULL)
        return perror("loop_new"), -1;
    if (!real)
        loop_set_wait_hook(w.loop, q3_wait, &w);
    ticks = 0;
    t0 = loop_time(w.loop);
    pthread_t worker;
    if (pthread_create(&worker, NULL, worker_main, &w) != 0)
        return fputs("pthread_create failed\n", stderr), -1;
    heartbeat_t hb;
    task_t *task = loop_create_task(w.loop, coro_init(&hb.coro, heartbeat_step, "heartbeat", NULL));
    if (task == NULL || loop_call_later(w.loop, stop_at * scale, stop_cb, NULL) == NULL ||
        loop_run_forever(w.loop) < 0)
        return printf("failed: %s\n", loop_error(w.loop)), -1;
    show(w.loop, "run_forever returned");
    task_cancel(task, NULL);                                /* close properly: the heartbeat's end, */
    if (loop_run_until_complete(w.loop, task_future(task)) == 0 &&
        future_cancelled(task_future(task)))
        show(w.loop, "heartbeat task done: cancelled");
    task_release(task);
    if (join_before_close) {
        pthread_join(worker, NULL);                         /* ...the worker's, */
        loop_close(w.loop);                                 /* ...and only then the loop */
        puts("loop closed after the worker ended");
    } else {
        loop_close(w.loop);       /* the mistake: closed with the worker still to come */
        puts("loop closed; the worker has not submitted yet");
        signal_set(&w, &w.gate);  /* (virtual: its 5 seconds are up now) */
        pthread_join(worker, NULL);
        puts("worker joined");
    }
    cfuture_release(w.cf);
    loop_free(w.loop);            /* no thread can call it any more */
    pthread_cond_destroy(&w.changed);
    pthread_mutex_destroy(&w.lock);
    return 0;
}
/* @end run */

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--real") == 0) {
        real = 1;
        scale = 0.1;
        setvbuf(stdout, NULL, _IOLBF, 0);
    }
    puts("-- 题目3: the worker submits at 5 s, the loop stops at 10 s");
    if (run(10, 1) < 0)
        return 1;
    puts("-- the loop closed too early: stopped at 3 s, closed before the worker's 5 s");
    return run(3, 0) < 0;
}
