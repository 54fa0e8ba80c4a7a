/* demo_sigint.c -- chapter 08: run_forever until Ctrl-C.
 *
 * Article 004 (6.2) runs a loop with run_forever() "until some condition,
 * such as a signal", and stops it with stop().  Here the loop sleeps on a
 * timer due in one day; a worker thread hands it five jobs
 * (loop_call_soon_threadsafe), then sends SIGINT to the process's main
 * thread, as Ctrl-C would.  The SIGINT handler -- a callback like any
 * other, run on the loop's thread -- calls loop_stop(); run_forever
 * returns within milliseconds, every job handed over before the signal
 * has run, and loop_close() puts SIGINT back to its default.  Real clock:
 * the times are checked, not printed.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

static pthread_t main_thread;

static void job(loop_t *loop, void *arg)
{
    (void)loop;
    printf("job %d ran\n", (int)(long)arg);
}

static void a_day_later(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    printf("a day went by (this line must never print)\n");
}

/* @region handler */
static void on_sigint(loop_t *loop, void *arg)
{
    (void)arg;
    printf("SIGINT: loop_stop()\n");
    loop_stop(loop);
}
/* @end handler */

static void *worker(void *arg)
{
    loop_t *loop = arg;
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    for (long i = 1; i <= 5; i++) {
        nanosleep(&ms10, NULL);
        loop_call_soon_threadsafe(loop, job, (void *)i);
    }
    nanosleep(&ms10, NULL);
    pthread_kill(main_thread, SIGINT); /* Ctrl-C, to the loop's thread */
    return NULL;
}

int main(void)
{
    /* @region main */
    loop_t *loop = loop_new();
    main_thread = pthread_self();
    if (loop_add_signal_handler(loop, SIGINT, on_sigint, NULL) < 0) {
        fprintf(stderr, "add_signal_handler: %s\n", loop_error(loop));
        return 1;
    }
    loop_call_later(loop, 86400, a_day_later, NULL);
    printf("the loop sleeps on a timer due in a day; a thread sends 5 jobs, then SIGINT\n");
    pthread_t th;
    pthread_create(&th, NULL, worker, loop);
    double t0 = loop_time(loop);
    int rc = loop_run_forever(loop);
    double took = loop_time(loop) - t0;
    pthread_join(th, NULL);
    printf("run_forever returned %d, within a second: %s\n", rc, took < 1 ? "yes" : "NO");
    printf("timers left in the heap: %zu (the day's); state %s\n", loop_scheduled_len(loop),
           loop_state_name(loop_get_state(loop)));
    loop_close(loop);
    struct sigaction sa;
    sigaction(SIGINT, NULL, &sa);
    printf("after loop_close(): %zu timers, SIGINT's disposition is %s\n",
           loop_scheduled_len(loop), sa.sa_handler == SIG_DFL ? "the default" : "still ours");
    loop_free(loop);
    /* @end main */
    return 0;
}
