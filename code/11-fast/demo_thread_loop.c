/* demo_thread_loop.c -- chapter 10: article 004 §8.3, a loop made in the
 * main thread and run by a thread named 'worker':
 *
 *     def worker(loop):
 *         asyncio.set_event_loop(loop)
 *         loop.run_forever()
 *
 *     loop = asyncio.new_event_loop()
 *     t = threading.Thread(target=worker, args=(loop,))
 *     t.start()
 *
 * The main thread hands the loop work with call_soon_threadsafe(), then
 * stops it the same way (stop() itself is not thread-safe), joins the
 * worker and closes the loop.  §8.3 also says a thread "cannot run_forever
 * directly (it raises)": nothing ties a loop to the thread that made it,
 * and the program ends by running the same loop in the main thread.  What
 * is refused is a loop that is already running ("This event loop is
 * already running", "Cannot close a running event loop", asked from the
 * main thread) and a second loop in a thread that runs one ("Cannot run
 * the event loop while another loop is running").
 *
 * Two threads print, so the program fixes the order: the main thread
 * tries its refusals while the worker waits inside a callback (hold), and
 * says nothing more until it has joined the worker.  That wait is also
 * what makes the refusals safe to ask: loop.h allows no other thread to
 * touch a loop but through loop_call_soon_threadsafe(), and the handshake
 * orders every access (as ThreadSanitizer checks).
 * Python twin: tests/conformance/runs/thread_loop.py (the same bytes). */
#define _GNU_SOURCE /* pthread_setname_np */
#include "policy.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Loops by order of first sight, as the twin's `names` dict. */
static loop_t *names[4];
static char name_buf[4][16];

static const char *name(loop_t *loop)
{
    size_t i = 0;
    while (i < 4 && names[i] != NULL && names[i] != loop)
        i++;
    if (i == 4)
        return "<loop ?>";
    if (names[i] == NULL) {
        names[i] = loop;
        snprintf(name_buf[i], sizeof name_buf[i], "<loop %zu>", i + 1);
    }
    return name_buf[i];
}

static const char *here(void)
{
    static _Thread_local char buf[64];
    return loop_thread_name(buf, sizeof buf);
}

/* threading.Event: set() once, wait() until set. */
typedef struct event {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool set;
} event_t;

#define EVENT_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false}

static void event_set(event_t *e)
{
    pthread_mutex_lock(&e->lock);
    e->set = true;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

static void event_wait(event_t *e)
{
    pthread_mutex_lock(&e->lock);
    while (!e->set)
        pthread_cond_wait(&e->cond, &e->lock);
    pthread_mutex_unlock(&e->lock);
}

static event_t holding = EVENT_INIT; /* the worker is inside hold() */
static event_t release = EVENT_INIT; /* the main thread is done trying */

/* @region worker */
static void *worker(void *arg)
{
    loop_t *loop = arg;
    pthread_setname_np(pthread_self(), "worker"); /* threading.Thread(name="worker") */
    loop_set_event_loop(loop);
    printf("%s: set_event_loop(%s); run_forever()\n", here(), name(loop));
    loop_run_forever(loop);
    printf("%s: run_forever() returned\n", here());
    loop_set_event_loop(NULL); /* Python's thread-local slot ends with the thread */
    return NULL;
}
/* @end worker */

static void job(loop_t *loop, void *arg)
{
    (void)loop;
    printf("%s: job %d: get_running_loop() -> %s, get_event_loop() -> %s\n", here(),
           (int)(intptr_t)arg, name(loop_running_loop()), name(loop_get_event_loop()));
}

/* Stay inside a callback of the running loop until the main thread has
 * tried what it tries. */
static void hold(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    event_set(&holding);
    event_wait(&release);
}

/* @region second_loop */
static void second_loop(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    loop_t *other = loop_new_event_loop();
    printf("%s: new_event_loop() -> %s\n", here(), name(other));
    if (loop_run_forever(other) < 0)
        printf("%s: %s.run_forever() -> RuntimeError: %s\n", here(), name(other),
               loop_error(other));
    loop_close(other);
    loop_free(other);
}
/* @end second_loop */

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

int main(void)
{
    /* @region main */
    puts("-- 8.3: a loop made in MainThread runs in thread 'worker'");
    loop_t *loop = loop_new_event_loop();
    if (loop == NULL)
        return 1;
    printf("%s: new_event_loop() -> %s\n", here(), name(loop));
    loop_call_soon(loop, hold, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, loop) != 0)
        return 1;
    event_wait(&holding);
    printf("%s: %s is running in 'worker'\n", here(), name(loop));

    puts("-- what is refused: a loop already running, from another thread");
    if (loop_run_forever(loop) < 0)
        printf("%s: %s.run_forever() -> RuntimeError: %s\n", here(), name(loop),
               loop_error(loop));
    if (loop_close(loop) < 0)
        printf("%s: %s.close() -> RuntimeError: %s\n", here(), name(loop), loop_error(loop));
    event_set(&release);

    puts("-- handing it work: call_soon_threadsafe(), then call_soon_threadsafe(stop)");
    for (intptr_t n = 1; n <= 3; n++)
        loop_call_soon_threadsafe(loop, job, (void *)n);
    loop_call_soon_threadsafe(loop, second_loop, NULL);
    loop_call_soon_threadsafe(loop, stop, NULL);
    pthread_join(t, NULL);
    printf("%s: joined 'worker'\n", here());
    /* @end main */

    puts("-- the same loop, now run by MainThread: a loop belongs to no thread");
    loop_call_soon(loop, job, (void *)(intptr_t)4);
    loop_call_soon(loop, stop, NULL);
    loop_run_forever(loop);
    loop_close(loop);
    printf("%s: %s.close()\n", here(), name(loop));
    loop_free(loop);
    return 0;
}
