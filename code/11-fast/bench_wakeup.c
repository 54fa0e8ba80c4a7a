/* bench_wakeup.c -- what a cross-thread call costs, for each way of waking
 * the loop: asyncio's pipe, an eventfd, and each of them coalesced.
 *
 * Two measurements per wake-up, each the median of RUNS runs:
 *   - latency: the loop sleeps in select() on a one-day timer; another
 *     thread calls loop_call_soon_threadsafe(); the time from just before
 *     the call to the start of the callback on the loop's thread (the
 *     median of ROUNDS calls per run, each made once the loop sleeps again);
 *   - throughput: SENDERS threads make CALLS calls each, as fast as they
 *     can, while the loop runs them; the wall time per call, and the
 *     number of write()s to the self-pipe per call.
 * Prints a gnuplot data block (book/plots/wakeup.gp draws it); `make bench`
 * writes it to book/data/wakeup.dat.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5
#define ROUNDS 300
#define SENDERS 4
#define CALLS 200000

static const struct {
    const char *name;
    loop_wakeup how;
    int coalesce;
} modes[] = {
    {"pipe", LOOP_WAKEUP_PIPE, 0},
    {"eventfd", LOOP_WAKEUP_EVENTFD, 0},
    {"pipe,\\ncoalesced", LOOP_WAKEUP_PIPE, 1},
    {"eventfd,\\ncoalesced", LOOP_WAKEUP_EVENTFD, 1},
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void never(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

static loop_t *new_loop(int m)
{
    loop_t *loop = loop_new();
    if (loop == NULL || loop_set_wakeup(loop, modes[m].how, modes[m].coalesce) < 0) {
        fprintf(stderr, "bench_wakeup: %s\n", loop ? loop_error(loop) : "out of memory");
        exit(1);
    }
    loop_call_later(loop, 86400, never, NULL);
    return loop;
}

static void *run_loop(void *arg)
{
    loop_run_forever(arg);
    return NULL;
}

/* ---- latency ---- */

static _Atomic double woke_at;

static void note_wake(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    atomic_store(&woke_at, now());
}

static double latency_run(int m)
{
    loop_t *loop = new_loop(m);
    pthread_t th;
    pthread_create(&th, NULL, run_loop, loop);
    double lat[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        struct timespec pause = {0, 200000}; /* 0.2 ms: the loop is asleep again */
        nanosleep(&pause, NULL);
        atomic_store(&woke_at, 0.0);
        double t0 = now();
        loop_call_soon_threadsafe(loop, note_wake, NULL);
        double t1;
        while ((t1 = atomic_load(&woke_at)) == 0.0)
            ; /* spin: the loop's thread answers within microseconds */
        lat[i] = t1 - t0;
    }
    loop_call_soon_threadsafe(loop, stop_cb, NULL);
    pthread_join(th, NULL);
    loop_close(loop);
    loop_free(loop);
    return median(lat, ROUNDS);
}

/* ---- throughput ---- */

static atomic_long remaining;

static void count_down(loop_t *loop, void *arg)
{
    (void)arg;
    if (atomic_fetch_sub(&remaining, 1) == 1)
        loop_stop(loop);
}

static void *send_all(void *arg)
{
    for (int i = 0; i < CALLS; i++)
        loop_call_soon_threadsafe(arg, count_down, NULL);
    return NULL;
}

static void throughput_run(int m, double *ns_per_call, double *writes_per_call)
{
    loop_t *loop = new_loop(m);
    atomic_store(&remaining, (long)SENDERS * CALLS);
    pthread_t th[SENDERS];
    double t0 = now();
    for (int i = 0; i < SENDERS; i++)
        pthread_create(&th[i], NULL, send_all, loop);
    loop_run_forever(loop);
    double t1 = now();
    for (int i = 0; i < SENDERS; i++)
        pthread_join(th[i], NULL);
    *ns_per_call = (t1 - t0) * 1e9 / ((double)SENDERS * CALLS);
    *writes_per_call = (double)loop_wakeup_writes(loop) / ((double)SENDERS * CALLS);
    loop_close(loop);
    loop_free(loop);
}

int main(void)
{
    printf("# wake-up latency and cross-thread call cost; every number is the median of %d runs\n",
           RUNS);
    printf("# latency: one call to a loop asleep in select(), median of %d calls a run\n", ROUNDS);
    printf("# throughput: %d threads x %d calls while the loop runs them\n", SENDERS, CALLS);
    printf("# columns: wake-up  latency_us  ns_per_call  writes_per_call\n");
    int nmodes = (int)(sizeof modes / sizeof modes[0]);
    for (int m = 0; m < nmodes; m++) {
        double lat[RUNS], ns[RUNS], wr[RUNS];
        for (int r = 0; r < RUNS; r++) {
            lat[r] = latency_run(m);
            throughput_run(m, &ns[r], &wr[r]);
        }
        printf("\"%s\"  %.1f  %.0f  %.4f\n", modes[m].name, median(lat, RUNS) * 1e6,
               median(ns, RUNS), median(wr, RUNS));
        fflush(stdout);
    }
    return 0;
}
