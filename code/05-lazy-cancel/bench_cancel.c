/* bench_cancel.c -- a timeout per request, almost all of them cancelled:
 * what the timer heap holds, and what a request costs, under three ways of
 * cancelling a timer.
 *
 *   cpython     this chapter's loop: lazy deletion, cancelled timers popped
 *               at the head, and the heap rebuilt when more than 100 are
 *               scheduled and more than half are cancelled;
 *   no-rebuild  the same loop with LOOP_RULES_NO_REBUILD: head pops only;
 *   libuv       removal from the middle of the heap at cancel time: the
 *               indexed heap of exercise 1 (exercises/answers/1-heap-remove).
 *
 * The workload: every 10 ms of virtual time, K requests arrive; each
 * schedules a timeout 30 s later; 50 ms later the replies of 19 in 20 of
 * them arrive and cancel their timeouts.  60 s in all.
 *
 * Output (gnuplot data, book/data/cancel.dat via `make bench`):
 *   index 0: every 100 ms, for each strategy, the number of entries in the
 *            heap and the bytes the process holds on the heap (mallinfo2)
 *            beyond what it held before the run.  Deterministic: the same
 *            on every run and machine with this glibc.
 *   comments: time per request, median of RUNS runs, of each strategy's
 *            data structure driven without a loop around it (schedule,
 *            cancel, cleanup and expiry only), so that the three compare.
 */
#define _GNU_SOURCE
#include "heap.h"
#include "iheap.h"
#include "loop.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define K 100          /* requests per tick */
#define TICK 0.01      /* seconds between arrivals */
#define TIMEOUT 30.0   /* each request's timeout */
#define REPLY_TICKS 5  /* a reply comes 5 ticks (50 ms) after its request */
#define TICKS 6000     /* 60 s */
#define SAMPLE_EVERY 10
#define SAMPLES (TICKS / SAMPLE_EVERY)
#define RUNS 5

static bool replied(int i) { return i % 20 != 0; } /* 19 in 20 */

static size_t heap_bytes(void)
{
    return mallinfo2().uordblks;
}

typedef struct sample {
    double t;
    size_t len, bytes;
} sample_t;

static sample_t samples[3][SAMPLES];

/* ---- the loop: strategies cpython and no-rebuild ----------------------- */

typedef struct work {
    int strategy;
    long tick;
    size_t base;                      /* heap bytes before the run */
    handle_t *pending[REPLY_TICKS][K]; /* timeouts waiting for a reply */
} work_t;

static void on_timeout(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg; /* a request timed out: nothing to do in a benchmark */
}

static void arrivals(loop_t *loop, void *arg)
{
    work_t *w = arg;
    w->tick++;
    handle_t **slot = w->pending[w->tick % REPLY_TICKS];
    for (int i = 0; i < K; i++) {
        /* The replies to the requests of REPLY_TICKS ticks ago.  Their
         * timeouts are 30 s away: not run, not cancelled yet, so the
         * borrowed pointers are still valid (loop.h). */
        if (slot[i] != NULL && replied(i))
            handle_cancel(slot[i]);
        slot[i] = loop_call_later(loop, TIMEOUT, on_timeout, NULL);
    }
    if (w->tick % SAMPLE_EVERY == 0) {
        sample_t *s = &samples[w->strategy][w->tick / SAMPLE_EVERY - 1];
        *s = (sample_t){loop_time(loop), loop_scheduled_len(loop), heap_bytes() - w->base};
    }
    if (w->tick < TICKS)
        loop_call_later(loop, TICK, arrivals, w);
    else
        loop_stop(loop);
}

static void run_loop(int strategy, loop_rules rules)
{
    static work_t w;
    w = (work_t){.strategy = strategy, .base = heap_bytes()};
    loop_t *loop = loop_new_virtual();
    if (loop == NULL)
        exit(1);
    w.base = heap_bytes();
    loop_set_rules(loop, rules);
    loop_call_soon(loop, arrivals, &w);
    if (loop_run_forever(loop) < 0)
        exit(1);
    loop_close(loop);
    loop_free(loop);
}

/* ---- the bare data structures, for timing ------------------------------- */

typedef struct timer {
    bool cancelled;
    itimer_t it; /* libuv only */
} timer_t_;

/* Lazy deletion on the stage's heap.c, with run_once's step 1. */
static void sim_lazy(bool rebuild, size_t *peak)
{
    heap_t heap;
    heap_init(&heap);
    size_t cancelled_count = 0;
    timer_t_ *pending[REPLY_TICKS][K] = {{0}};
    double now = 0;
    for (long tick = 1; tick <= TICKS; tick++) {
        now += TICK;
        size_t n = heap_len(&heap);
        if (rebuild && n > LOOP_MIN_SCHEDULED_TIMER_HANDLES &&
            (double)cancelled_count / (double)n > LOOP_MIN_CANCELLED_TIMER_HANDLES_FRACTION) {
            size_t kept = 0;
            for (size_t i = 0; i < heap.len; i++) {
                timer_t_ *t = (timer_t_ *)(void *)heap.items[i].handle;
                if (t->cancelled)
                    free(t);
                else
                    heap.items[kept++] = heap.items[i];
            }
            heap.len = kept;
            heap_heapify(&heap);
            cancelled_count = 0;
        } else {
            heap_entry_t e;
            while (heap_len(&heap) > 0 &&
                   ((timer_t_ *)(void *)heap_top(&heap)->handle)->cancelled) {
                heap_pop(&heap, &e);
                cancelled_count--;
                free(e.handle);
            }
        }
        heap_entry_t e;
        while (heap_len(&heap) > 0 && heap_top(&heap)->when < now + 1e-9) {
            heap_pop(&heap, &e); /* due: run it (or skip it) */
            free(e.handle);
        }
        timer_t_ **slot = pending[tick % REPLY_TICKS];
        for (int i = 0; i < K; i++) {
            if (slot[i] != NULL && replied(i)) {
                slot[i]->cancelled = true;
                cancelled_count++;
            }
            timer_t_ *t = calloc(1, sizeof *t);
            if (t == NULL || heap_push(&heap, now + TIMEOUT, (handle_t *)(void *)t) < 0)
                exit(1);
            slot[i] = t;
        }
        if (heap_len(&heap) > *peak)
            *peak = heap_len(&heap);
    }
    heap_entry_t e;
    while (heap_pop(&heap, &e))
        free(e.handle);
    heap_free(&heap);
}

/* Removal from the middle: a cancelled timer leaves the heap at once. */
static void sim_libuv(size_t *peak, long sample_strategy)
{
    size_t base = heap_bytes();
    iheap_t heap;
    iheap_init(&heap);
    timer_t_ *pending[REPLY_TICKS][K] = {{0}};
    double now = 0;
    for (long tick = 1; tick <= TICKS; tick++) {
        now += TICK;
        itimer_t *it;
        while ((it = iheap_top(&heap)) != NULL && it->when < now + 1e-9) {
            iheap_pop(&heap); /* due: run it (a timed-out request is never */
            free(it->data);   /* in pending any more: 30 s > 50 ms) */
        }
        timer_t_ **slot = pending[tick % REPLY_TICKS];
        for (int i = 0; i < K; i++) {
            if (slot[i] != NULL && replied(i)) {
                iheap_remove(&heap, &slot[i]->it);
                free(slot[i]);
            }
            timer_t_ *t = calloc(1, sizeof *t);
            if (t == NULL)
                exit(1);
            t->it = (itimer_t){.when = now + TIMEOUT, .index = IHEAP_NONE, .data = t};
            if (iheap_push(&heap, &t->it) < 0)
                exit(1);
            slot[i] = t;
        }
        if (iheap_len(&heap) > *peak)
            *peak = iheap_len(&heap);
        if (sample_strategy >= 0 && tick % SAMPLE_EVERY == 0)
            samples[sample_strategy][tick / SAMPLE_EVERY - 1] =
                (sample_t){now, iheap_len(&heap), heap_bytes() - base};
    }
    itimer_t *it;
    while ((it = iheap_pop(&heap)) != NULL)
        free(it->data);
    iheap_free(&heap);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median time per request of RUNS runs of strategy s. */
static double time_per_request(int s, size_t *peak)
{
    double t[RUNS];
    for (int r = 0; r < RUNS; r++) {
        *peak = 0;
        double t0 = seconds();
        if (s == 2)
            sim_libuv(peak, -1);
        else
            sim_lazy(s == 0, peak);
        t[r] = (seconds() - t0) / ((double)TICKS * K) * 1e9;
    }
    qsort(t, RUNS, sizeof t[0], by_value);
    return t[RUNS / 2];
}

int main(void)
{
    static const char *names[3] = {"cpython", "no-rebuild", "libuv"};
    run_loop(0, LOOP_RULES_ASYNCIO);
    run_loop(1, LOOP_RULES_NO_REBUILD);
    size_t peak = 0;
    sim_libuv(&peak, 2);

    printf("# bench_cancel: every %g s, %d requests each schedule a timeout %g s ahead;\n"
           "# %d ticks (%g ms) later 19 in 20 are cancelled.  %d ticks.\n",
           TICK, K, TIMEOUT, REPLY_TICKS, REPLY_TICKS * TICK * 1e3, TICKS);
    for (int s = 0; s < 3; s++) {
        double ns = time_per_request(s, &peak);
        printf("# %-10s  %6.1f ns per request (schedule + cancel + cleanup; median of %d runs),"
               " peak heap %zu entries\n", names[s], ns, RUNS, peak);
    }
    printf("# index 0, columns: time_s  entries_cpython bytes_cpython  entries_norebuild"
           " bytes_norebuild  entries_libuv bytes_libuv\n");
    for (int i = 0; i < SAMPLES; i++)
        printf("%.2f %zu %zu %zu %zu %zu %zu\n", samples[0][i].t, samples[0][i].len,
               samples[0][i].bytes, samples[1][i].len, samples[1][i].bytes, samples[2][i].len,
               samples[2][i].bytes);
    return 0;
}
