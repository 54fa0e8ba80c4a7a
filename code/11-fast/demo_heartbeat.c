/* demo_heartbeat.c -- article 004's exercise 3 (跨线程提交任务), in C.
 *
 * The loop's thread prints a heartbeat every second; another thread, after
 * 5 seconds, submits work to the loop with loop_call_soon_threadsafe(); the
 * loop is stopped at 10 seconds.
 *
 *     demo_heartbeat          on the virtual clock: the whole run takes no
 *                             wall time, and its output is pinned byte for byte
 *     demo_heartbeat --real   on the real clock, with a "second" of 0.2 s;
 *                             prints one verdict line about the order only
 *
 * On the virtual clock the worker cannot sleep 5 virtual seconds by itself:
 * virtual time moves only in the loop's wait hook.  So the hook stands for
 * the passing time: when a wait would reach 5 s it sets the clock there,
 * releases the worker, and returns only once the worker has made its call.
 * The call is a real cross-thread call all the same; only its moment is
 * fixed, which is what makes the output exact.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define WORKER_AT 5
#define STOP_AT 10

static double unit = 1.0; /* seconds per "second": 0.2 with --real */
static double start;      /* loop_time() when the demo began */
static bool real_clock;

/* What ran, in order, for the real clock's verdict. */
static char events[64];
static int nevents;

static void event(char what, double now, const char *text)
{
    if (nevents < (int)sizeof events - 1)
        events[nevents++] = what;
    if (!real_clock)
        printf("%6.3f  %s\n", now - start, text);
}

/* @region heartbeat */
/* The background task: "while True: print('心跳'); await asyncio.sleep(1)".
 * The next beat is due at start + n seconds exactly (call_at, not
 * call_later), so the beats do not drift on the real clock. */
static void heartbeat(loop_t *loop, void *arg)
{
    int n = (int)(long)arg;
    char text[32];
    snprintf(text, sizeof text, "heartbeat %d", n);
    event('h', loop_time(loop), text);
    loop_call_at(loop, start + (n + 1) * unit, heartbeat, (void *)(long)(n + 1));
}

static void from_worker(loop_t *loop, void *arg)
{
    (void)arg;
    event('w', loop_time(loop), "from the worker thread");
}

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    event('s', loop_time(loop), "loop_stop()");
    loop_stop(loop);
}
/* @end heartbeat */

/* @region worker */
/* The worker's "5 seconds": a real sleep, or (virtual clock) the wait hook's
 * signal that the clock has reached 5 s.  Then it calls into the loop and
 * says so. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int state; /* 0: waiting, 1: released by the hook, 2: has made its call */
} w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void set_state(int state)
{
    pthread_mutex_lock(&w.lock);
    w.state = state;
    pthread_cond_broadcast(&w.cv);
    pthread_mutex_unlock(&w.lock);
}

static void wait_state(int state)
{
    pthread_mutex_lock(&w.lock);
    while (w.state < state)
        pthread_cond_wait(&w.cv, &w.lock);
    pthread_mutex_unlock(&w.lock);
}

static void *worker(void *arg)
{
    loop_t *loop = arg;
    if (real_clock) {
        double d = WORKER_AT * unit;
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
    } else {
        wait_state(1);
    }
    loop_call_soon_threadsafe(loop, from_worker, NULL);
    set_state(2);
    return NULL;
}

/* The virtual clock's wait: autojump, except that the wait that reaches
 * WORKER_AT seconds stops there and lets the worker make its call. */
static double virtual_wait(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    static bool released; /* the loop's thread's own note */
    double now = loop_time(loop), until = now + timeout;
    if (!released && (timeout < 0 || until >= start + WORKER_AT * unit)) {
        released = true;
        loop_set_time(loop, start + WORKER_AT * unit > now ? start + WORKER_AT * unit : now);
        set_state(1);
        wait_state(2); /* its byte is in the self-pipe now: select() sees it */
        return 0;
    }
    if (timeout >= 0)
        loop_set_time(loop, until);
    return 0;
}
/* @end worker */

/* The real clock's verdict: the beats 0..10 in order, the worker's call
 * once, next to beat 5, the stop at 10. */
static int verdict(void)
{
    char want_a[] = "hhhhhwhhhhhhs", want_b[] = "hhhhhhwhhhhhs";
    /* beat 10 and the stop share a deadline: heapq decides, as below */
    events[nevents] = '\0';
    bool ok = false;
    for (int k = 0; k < 4 && !ok; k++) {
        char want[16];
        strcpy(want, k & 1 ? want_b : want_a);
        if (k & 2) { /* stop before the last beat */
            want[11] = 's';
            want[12] = 'h';
        }
        ok = strcmp(events, want) == 0;
    }
    printf("real clock (a second is %.1f s): heartbeats 0 to 10 in order, the worker's call "
           "once, next to heartbeat 5, the stop at 10: %s\n", unit, ok ? "ok" : "NOT ok");
    if (!ok)
        printf("  (h: heartbeat, w: worker, s: stop) ran: %s\n", events);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    real_clock = argc == 2 && strcmp(argv[1], "--real") == 0;
    if (argc > 1 && !real_clock) {
        fprintf(stderr, "usage: demo_heartbeat [--real]\n");
        return 2;
    }
    /* @region main */
    loop_t *loop;
    if (real_clock) {
        unit = 0.2;
        loop = loop_new();
    } else {
        loop = loop_new_virtual();
        loop_set_wait_hook(loop, virtual_wait, NULL);
    }
    if (loop == NULL)
        return 1;
    start = loop_time(loop);
    loop_call_soon(loop, heartbeat, (void *)0L);
    loop_call_at(loop, start + STOP_AT * unit, stop, NULL);
    pthread_t th;
    pthread_create(&th, NULL, worker, loop);
    int rc = loop_run_forever(loop);
    pthread_join(th, NULL);
    if (!real_clock)
        printf("%6.3f  run_forever returned %d; the worker thread is joined\n",
               loop_time(loop) - start, rc);
    loop_close(loop);
    loop_free(loop);
    /* @end main */
    return real_clock ? verdict() : 0;
}
