/* bench_selector.c -- what one tick costs as idle fds accumulate, per backend.
 *
 * The workload of libevent's test/bench.c and libev's bench: N watched
 * fds, the ends of N / 2 socketpairs, each with a reader, and a few
 * "active" ones passing a byte along.  ACTIVE tokens travel round the ring
 * of fds: the reader of fd i reads its byte and writes one so that fd i + 1
 * becomes readable (into the other end of fd i + 1's socketpair).  So
 * every tick, ACTIVE fds are ready and N - ACTIVE are idle; the time per
 * tick shows what the idle ones cost.  (Both ends are watched so that N
 * watched fds cost N open fds, not 2N: RLIMIT_NOFILE bounds N.)
 *
 * Two data sets (gnuplot `index` 0 and 1):
 *   0. fds only;
 *   1. each fd also has a timeout, a timer 60 s ahead that every byte
 *      re-arms, as libevent's bench -t does and as asyncio code does with a
 *      per-connection idle timeout: handle_cancel() the old timer, then
 *      loop_call_later() a new one.  The cancelled timers stay in the heap
 *      until the rebuild (chapter 05) drops them.
 * For each N and backend: set up once, then RUNS measurements of at least
 * MIN_SECONDS each; the row holds the median, in microseconds of CPU time
 * (user + system) per tick.
 * select stops where an fd reaches FD_SETSIZE, the others where the
 * open-files limit does (raised to its hard limit, and the hard limit up to
 * /proc/sys/fs/nr_open where the process may: CAP_SYS_RESOURCE).
 *
 * usage: bench_selector [--quick]   (--quick: fewer sizes, for a smoke test)
 */
#define _GNU_SOURCE
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { ACTIVE = 10, RUNS = 7 };
static const double MIN_SECONDS = 0.1; /* each measurement */
static const double TIMEOUT = 60.0;     /* the per-fd timer, never reached */

/* Watched fd i is fds[i]; its socketpair's other end is fds[i ^ 1]. */
static int *fds;
static handle_t **timers; /* timers[i]: fd i's timeout (data set 1), retained */
static int nfds;
static int with_timers;
static long ticks, target;

/* The CPU time of this thread, user and system: what a tick costs the
 * process, kernel work included, without the time other processes take
 * the CPU away (the tokens are always ready, so no tick sleeps). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void never(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    fprintf(stderr, "bench_selector: a 60 s timeout fired\n");
    exit(1);
}

/* (Re)arm fd i's timeout: cancel the old timer, schedule a new one. */
static void arm(loop_t *loop, int i)
{
    if (timers[i] != NULL) {
        handle_cancel(timers[i]);
        handle_release(timers[i]);
    }
    timers[i] = loop_call_later(loop, TIMEOUT, never, NULL);
    if (timers[i] == NULL) {
        fprintf(stderr, "bench_selector: call_later: %s\n", loop_error(loop));
        exit(1);
    }
    handle_retain(timers[i]);
}

/* Make watched fd i readable: write into the other end of its pair. */
static void give(int i)
{
    if (write(fds[i ^ 1], "x", 1) != 1) {
        perror("bench_selector: write");
        exit(1);
    }
}

/* @region pass */
/* fd i is readable: take its byte, give one to fd i + 1. */
static void pass(loop_t *loop, void *arg)
{
    int i = (int)(long)arg;
    char byte;
    if (read(fds[i], &byte, 1) != 1)
        return;
    give(i + 1 == nfds ? 0 : i + 1);
    if (with_timers)
        arm(loop, i);
}
/* @end pass */

/* The wait hook counts ticks and stops the loop after `target`. */
static double count_tick(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (++ticks == target)
        loop_stop(loop);
    return timeout;
}

/* Time `n` ticks; seconds per tick. */
static double run_ticks(loop_t *loop, long n)
{
    ticks = 0;
    target = n;
    double t0 = cpu_now();
    if (loop_run_forever(loop) < 0) {
        fprintf(stderr, "bench_selector: %s\n", loop_error(loop));
        exit(1);
    }
    return (cpu_now() - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median time per tick, in microseconds, of `backend` with n fds; NAN
 * if the backend cannot watch them all (select beyond FD_SETSIZE). */
static double measure(const char *backend, int n, int timers_too)
{
    loop_t *loop = loop_new();
    if (loop == NULL || loop_set_backend(loop, backend) < 0) {
        fprintf(stderr, "bench_selector: no backend %s\n", backend);
        exit(1);
    }
    fds = calloc((size_t)n, sizeof *fds);
    timers = calloc((size_t)n, sizeof *timers);
    nfds = n;
    with_timers = timers_too;
    double result = NAN;
    int made = 0, ok = 1;
    for (; made < n && ok; made += 2) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds + made) < 0) {
            fprintf(stderr, "bench_selector: socketpair %d: %s\n", made / 2, strerror(errno));
            exit(1);
        }
        for (int i = made; i < made + 2 && ok; i++) {
            ok = loop_add_reader(loop, fds[i], pass, (void *)(long)i) == 0;
            if (ok && timers_too)
                arm(loop, i);
        }
    }
    if (ok) {
        for (int k = 0; k < ACTIVE; k++) /* the tokens, spread round the ring */
            give((int)((long)k * n / ACTIVE));
        loop_set_wait_hook(loop, count_tick, NULL);
        run_ticks(loop, 50); /* warm up: caches, the heap's first rebuild */
        long n_ticks = 50;   /* calibrate: at least MIN_SECONDS a measurement */
        while (run_ticks(loop, n_ticks) * (double)n_ticks < MIN_SECONDS && n_ticks < 10000000)
            n_ticks *= 2;
        double samples[RUNS];
        for (int r = 0; r < RUNS; r++)
            samples[r] = run_ticks(loop, n_ticks) * 1e6;
        qsort(samples, RUNS, sizeof samples[0], cmp_double);
        result = samples[RUNS / 2];
    }
    loop_close(loop);
    loop_free(loop);
    for (int i = 0; i < made; i++) {
        handle_release(timers[i]);
        close(fds[i]);
    }
    free(fds);
    free(timers);
    return result;
}

int main(int argc, char **argv)
{
    static const int all_sizes[] = {100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
    static const int quick_sizes[] = {100, 500, 2000};
    int sizes_fit[16];
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const int *sizes = quick ? quick_sizes : all_sizes;
    int nsizes = quick ? 3 : (int)(sizeof all_sizes / sizeof all_sizes[0]);

    /* One fd per watched fd, and a few more: raise the open-files limit
     * (with CAP_SYS_RESOURCE the hard one too, up to /proc/sys/fs/nr_open). */
    rlim_t want = (rlim_t)sizes[nsizes - 1] + 64;
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    if (lim.rlim_cur < want) {
        struct rlimit raised = {want, lim.rlim_max > want ? lim.rlim_max : want};
        if (setrlimit(RLIMIT_NOFILE, &raised) < 0) {
            raised.rlim_cur = lim.rlim_max;
            raised.rlim_max = lim.rlim_max;
            setrlimit(RLIMIT_NOFILE, &raised);
        }
        getrlimit(RLIMIT_NOFILE, &lim);
    }

    const char *backends[] = {"select", "poll", "epoll"};
    printf("# backends: %s (kqueue: not on this platform)\n", loop_backends());
    printf("# first column: watched fds (both ends of socketpairs), %d tokens passed along;\n"
           "# each value the median of %d runs of at least %g s of the loop thread's CPU time\n"
           "# (user + system, CLOCK_THREAD_CPUTIME_ID) per tick\n", ACTIVE, RUNS, MIN_SECONDS);
    /* The sizes that fit; and the largest even number that does, if the
     * limit cuts the list short. */
    int nfit = 0;
    for (int s = 0; s < nsizes; s++)
        if ((rlim_t)sizes[s] + 64 <= lim.rlim_cur)
            sizes_fit[nfit++] = sizes[s];
    if (nfit < nsizes) {
        int largest = (int)((lim.rlim_cur - 64) / 500 * 500);
        if (nfit == 0 || largest > sizes_fit[nfit - 1])
            sizes_fit[nfit++] = largest;
        printf("# open-files limit: %llu (hard %llu; raising it needs CAP_SYS_RESOURCE):\n"
               "# sizes above %d fds were skipped\n", (unsigned long long)lim.rlim_cur,
               (unsigned long long)lim.rlim_max, sizes_fit[nfit - 1]);
    } else {
        printf("# open-files limit: %llu\n", (unsigned long long)lim.rlim_cur);
    }
    for (int timers = 0; timers <= 1; timers++) {
        if (timers > 0)
            printf("\n\n"); /* gnuplot: a new data set (index 1) */
        printf("# index %d: %s\n", timers,
               timers ? "each fd also has a 60 s timeout, re-armed (cancel + call_later) by every byte"
                      : "fds only");
        printf("# %-8s %12s %12s %12s   (microseconds per tick; - : not possible)\n", "fds",
               "select", "poll", "epoll");
        for (int s = 0; s < nfit; s++) {
            int n = sizes_fit[s];
            printf("%-10d", n);
            for (int b = 0; b < 3; b++) {
                double us = measure(backends[b], n, timers);
                if (isnan(us))
                    printf(" %12s", "-");
                else
                    printf(" %12.2f", us);
                fflush(stdout);
            }
            printf("\n");
        }
    }
    return 0;
}
