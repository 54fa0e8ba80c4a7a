/* loop_bench.c -- chapter 11's loop benchmarks, our side: one workload, one
 * run, on the loop of the stage this program was compiled against.
 *
 * The same eight workloads run on libuv, libev and libevent (peer_uv.c,
 * peer_ev.c, peer_event.c) and on asyncio and uvloop (loops_peer.py), each
 * in its own idiom; this file is the idiom of our loop.h, the code a reader
 * of the book would write.  tests/bench/loops.py (make bench) runs every
 * contender in a new process per measurement and compares the medians.
 *
 *   batch       N loop_call_soon before loop_run_forever; the last callback
 *               stops the loop: ns per callback              (stage 02 on)
 *   chain       one callback loop_call_soon's itself until it ran N times:
 *               ns per callback                              (stage 02 on)
 *   timers      N timers d_i seconds ahead, d_i random in [0,1), all fired,
 *               none before an earlier deadline: CPU ns per timer (03 on)
 *   churn       N times: schedule a timer and cancel it at once; then one
 *               tick, which throws the cancelled timers away: ns per
 *               schedule + cancel                            (stage 05 on)
 *   churn_half  N timers scheduled 10 s out, the odd ones cancelled, then
 *               one tick (none is due): ns per timer scheduled (05 on)
 *   pingpong    a socketpair with a reader on each end; one byte goes back
 *               and forth N times: ns per round trip         (every stage)
 *   xthread     another thread posts N callbacks with
 *               loop_call_soon_threadsafe, each run in the order posted:
 *               ns per post, both threads' CPU               (stage 06 on)
 *   timer_bytes N timers pending 1000 s ahead: the allocator's growth per
 *               timer (glibc's mallinfo2, bytes in use in its arenas and
 *               in chunks of their own mmap); not timed      (stage 03 on)
 *   q2, q2_cpu  article 004's 题目2: asyncio.run(main()), where main
 *               gathers N tasks that each await sleep(0.01) and prints
 *               loop.time()'s end - start: q2 prints those ms (wall, as
 *               the article does), q2_cpu the CPU ms of the same stretch
 *               (N = 1000, the article's; tasks: stage 09 on)
 *
 * Time is the process's CPU time (CLOCK_PROCESS_CPUTIME_ID: user + system,
 * every thread) over the timed region alone, divided by N.  What the timed
 * region uses that is not the loop's work (the delays, the deadlines, the
 * handles kept for cancelling) is allocated and written before it, so no
 * page fault of ours is charged to the loop; the loop allocates what it
 * allocates (its handles), inside.
 *
 * build (one program per stage NN; tests/bench.sh does it):
 *   cc -std=c11 -O2 -g -Wall -Wextra -Werror -DSTAGE_NUM=NN -Icode/NN-slug \
 *      tests/bench/loop_bench.c BUILD/NN-slug/libloop.a -lm -lpthread \
 *      -o loop_bench-NN
 * usage: loop_bench-NN WORKLOAD [N]      (N: the default above if omitted)
 *   prints one line, `WORKLOAD COUNT VALUE`: COUNT what the run counted
 *   (callbacks run, timers fired or scheduled or pending, round trips, posts
 *   run), which the driver checks too.  Exit status: 0; 1 if a check of
 *   this program failed (message on stderr); 2 on bad arguments; 3 when this
 *   stage cannot do WORKLOAD (stage 02 has no timers).  Stages 07 on wait
 *   in the backend LOOP_BACKEND names (the driver sets epoll).
 */
#include "peer_common.h" /* the clock, the delays, pre-faulting: every C contender's */
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* STAGE: the stage's number, from -DSTAGE_NUM=NN.  NN is written as the
 * folders write it, 07, 08, 09, and the preprocessor reads 08 as a bad
 * octal number: so it reads 1 followed by NN, 108, and subtracts 100 (or
 * 10, for a STAGE_NUM of one digit). */
#ifndef STAGE_NUM
#error "compile with -DSTAGE_NUM=NN, the stage whose loop.h is on the include path"
#endif
#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
#if PASTE(1, STAGE_NUM) >= 100
#define STAGE (PASTE(1, STAGE_NUM) - 100)
#else
#define STAGE (PASTE(1, STAGE_NUM) - 10)
#endif

/* What one run measured: the count the driver checks, and the value
 * printed (ns or bytes per operation). */
typedef struct result {
    long count;
    double value;
} result_t;

/* The state the callbacks share: a callback gets only (loop, arg), and the
 * arg says which callback this is, so the rest lives here. */
static struct {
    long n;             /* the N of the command line */
    long count;         /* callbacks run, timers fired, round trips... */
    long errors;        /* failed checks */
    const double *when; /* timers: each timer's deadline */
    double last;        /* timers: the deadline of the previous firing */
    int ends[2];        /* pingpong: the socketpair, end A and end B */
} bench;

/* ---- Helpers: failing, the loop, the clock ------------------------------ */

static void die(const char *what)
{
    fprintf(stderr, "loop_bench-%02d: %s\n", STAGE, what);
    exit(1);
}

/* A call of loop.h was refused: its sentence is in loop_error(). */
static void die_loop(loop_t *loop, const char *call)
{
    fprintf(stderr, "loop_bench-%02d: %s: %s\n", STAGE, call, loop_error(loop));
    exit(1);
}

static loop_t *new_loop(void)
{
    loop_t *loop = loop_new();
    if (loop == NULL)
        die(strerror(errno)); /* a NULL loop has no loop_error() */
    return loop;
}

static void run(loop_t *loop)
{
    if (loop_run_forever(loop) < 0)
        die_loop(loop, "loop_run_forever");
}

static void close_loop(loop_t *loop)
{
    if (loop_close(loop) < 0)
        die_loop(loop, "loop_close");
    loop_free(loop);
}


/* ---- pingpong: one byte back and forth on a socketpair (every stage) ---- */


/* End B: echo the byte. */
static void on_b(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    read_byte(bench.ends[1]);
    write_byte(bench.ends[1]);
}

/* End A: the byte came back, one round trip; send the next one. */
static void on_a(loop_t *loop, void *arg)
{
    (void)arg;
    read_byte(bench.ends[0]);
    if (++bench.count == bench.n)
        loop_stop(loop);
    else
        write_byte(bench.ends[0]);
}

static result_t pingpong(long n)
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, bench.ends) < 0)
        die("pingpong: socketpair failed");
    for (int i = 0; i < 2; i++)
        if (fcntl(bench.ends[i], F_SETFL, fcntl(bench.ends[i], F_GETFL) | O_NONBLOCK) < 0)
            die("pingpong: fcntl O_NONBLOCK failed");
    loop_t *loop = new_loop();

    double t0 = cpu_ns();
    if (loop_add_reader(loop, bench.ends[0], on_a, NULL) < 0 ||
        loop_add_reader(loop, bench.ends[1], on_b, NULL) < 0)
        die_loop(loop, "loop_add_reader");
    write_byte(bench.ends[0]);
    run(loop);
    double elapsed = cpu_ns() - t0;

    /* Remove the watches before closing the fds (loop.h asks it). */
    loop_remove_reader(loop, bench.ends[0]);
    loop_remove_reader(loop, bench.ends[1]);
    close(bench.ends[0]);
    close(bench.ends[1]);
    close_loop(loop);
    return (result_t){bench.count, elapsed / (double)n};
}

/* ---- batch, chain: loop_call_soon (stage 02 on) ------------------------- */
#if STAGE >= 2

/* @region batch */
static void count_one(loop_t *loop, void *arg)
{
    (void)arg;
    if (++bench.count == bench.n)
        loop_stop(loop);
}

static result_t batch(long n)
{
    loop_t *loop = new_loop();

    double t0 = cpu_ns();
    for (long i = 0; i < n; i++)
        if (loop_call_soon(loop, count_one, NULL) == NULL)
            die_loop(loop, "loop_call_soon");
    run(loop);
    double elapsed = cpu_ns() - t0;

    close_loop(loop);
    return (result_t){bench.count, elapsed / (double)n};
}
/* @end batch */

static void chain_link(loop_t *loop, void *arg)
{
    if (++bench.count == bench.n)
        loop_stop(loop);
    else if (loop_call_soon(loop, chain_link, arg) == NULL)
        die_loop(loop, "loop_call_soon");
}

static result_t chain(long n)
{
    loop_t *loop = new_loop();

    double t0 = cpu_ns();
    if (loop_call_soon(loop, chain_link, NULL) == NULL)
        die_loop(loop, "loop_call_soon");
    run(loop);
    double elapsed = cpu_ns() - t0;

    close_loop(loop);
    return (result_t){bench.count, elapsed / (double)n};
}

#define WITH_CALL_SOON(fn) fn
#else
#define WITH_CALL_SOON(fn) NULL
#endif

/* ---- timers, timer_bytes: loop_call_later (stage 03 on) ----------------- */
#if STAGE >= 3



/* Timers may leave the heap out of their deadlines' order only within one
 * tick's tolerance; 2 ms is generous (every contender uses it). */
#define TOLERANCE 0.002

/* A timer fired: its arg is its index.  It checks its deadline against the
 * previous one's: not the d_i, because the loop reads the clock at every
 * call (as CPython does), and scheduling a million timers takes long
 * enough that a late small delay rightly fires after an early large one. */
static void timer_fired(loop_t *loop, void *arg)
{
    long i = (long)(uintptr_t)arg;
    double when = bench.when[i];
    if (when < bench.last - TOLERANCE && bench.errors++ == 0)
        fprintf(stderr, "timer %ld (deadline %.6f) fired after one at %.6f\n", i, when,
                bench.last);
    bench.last = when;
    if (++bench.count == bench.n)
        loop_stop(loop);
}

/* Each timer at now + d_i: loop_call_later(d_i) is exactly
 * loop_call_at(loop_time() + d_i) (loop.h), spelled out here so that the
 * check knows each deadline. */
static result_t timers(long n)
{
    double *delay = make_delays((size_t)n);
    double *when = prefaulted_array((size_t)n, sizeof *when);
    bench.when = when;
    bench.last = -1.0;
    loop_t *loop = new_loop();

    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) {
        when[i] = loop_time(loop) + delay[i];
        if (loop_call_at(loop, when[i], timer_fired, (void *)(uintptr_t)i) == NULL)
            die_loop(loop, "loop_call_at");
    }
    run(loop);
    double elapsed = cpu_ns() - t0;

    close_loop(loop);
    free(when);
    free(delay);
    return (result_t){bench.count, elapsed / (double)n};
}

#ifdef __GLIBC__

/* A timer that must never run: the loop is never run. */
static void never(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    bench.errors++;
}

/* What N pending timers cost: the handles and the heap's array, as the
 * allocator counts them (headers included).  The caller owns nothing. */
static result_t timer_bytes(long n)
{
    double *delay = make_delays((size_t)n);
    loop_t *loop = new_loop();

    size_t before = heap_in_use();
    for (long i = 0; i < n; i++)
        if (loop_call_later(loop, 1000.0 + delay[i], never, NULL) == NULL)
            die_loop(loop, "loop_call_later");
    size_t after = heap_in_use();
#if STAGE >= 5
    long pending = (long)loop_scheduled_len(loop); /* the loop's own count */
#else
    long pending = n;
#endif

    close_loop(loop);
    free(delay);
    return (result_t){pending, ((double)after - (double)before) / (double)n};
}
#define WITH_MALLINFO(fn) fn
#else
#define WITH_MALLINFO(fn) NULL
#endif

#define WITH_TIMERS(fn) fn
#else
#define WITH_TIMERS(fn) NULL
#define WITH_MALLINFO(fn) NULL
#endif

/* ---- churn, churn_half: handle_cancel (stage 05 on) --------------------- */
#if STAGE >= 5

static void cancelled_fired(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    bench.errors++;
}

/* The handle loop_call_later returns is borrowed: cancel it at once, and
 * the loop drops it when it next meets it (chapter 05's lazy deletion).
 * loop_stop() before loop_run_forever() makes the run one tick long, and
 * step 1 of that tick throws the cancelled timers away: inside the timed
 * region, as it should be. */
static result_t churn(long n)
{
    double *delay = make_delays((size_t)n);
    loop_t *loop = new_loop();

    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) {
        handle_t *h = loop_call_later(loop, delay[i], cancelled_fired, NULL);
        if (h == NULL)
            die_loop(loop, "loop_call_later");
        handle_cancel(h);
    }
    loop_stop(loop);
    run(loop);
    double elapsed = cpu_ns() - t0;

    if (loop_scheduled_len(loop) != 0)
        die("churn: cancelled timers left in the heap after the tick");
    close_loop(loop);
    free(delay);
    return (result_t){n, elapsed / (double)n};
}

/* No timer of churn_half may fire: they are due 10 s out. */
static void half_fired(loop_t *loop, void *arg)
{
    (void)loop;
    if (bench.errors++ == 0)
        fprintf(stderr, "timer %ld fired in the first tick\n", (long)(uintptr_t)arg);
}

/* The odd timers are cancelled once all are scheduled, through the
 * borrowed pointers loop_call_later returned, kept in an array: no
 * callback has run yet, so they are all valid. */
static result_t churn_half(long n)
{
    double *delay = make_delays((size_t)n);
    handle_t **handle = prefaulted_array((size_t)n, sizeof *handle);
    loop_t *loop = new_loop();

    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) {
        handle[i] = loop_call_later(loop, 10.0 + delay[i], half_fired, (void *)(uintptr_t)i);
        if (handle[i] == NULL)
            die_loop(loop, "loop_call_later");
    }
    for (long i = 1; i < n; i += 2)
        handle_cancel(handle[i]);
    loop_stop(loop); /* one tick, as churn's; the even half stays pending */
    run(loop);
    double elapsed = cpu_ns() - t0;

    close_loop(loop);
    free(handle);
    free(delay);
    return (result_t){n, elapsed / (double)n};
}

#define WITH_CANCEL(fn) fn
#else
#define WITH_CANCEL(fn) NULL
#endif

/* ---- xthread: loop_call_soon_threadsafe (stage 06 on) ------------------- */
#if STAGE >= 6

/* A post ran: its arg is its index, and posts run in the order posted. */
static void post_ran(loop_t *loop, void *arg)
{
    long i = (long)(uintptr_t)arg;
    if (i != bench.count && bench.errors++ == 0)
        fprintf(stderr, "post %ld ran when post %ld was due\n", i, bench.count);
    if (++bench.count == bench.n)
        loop_stop(loop);
}

/* The other thread: post as fast as it can.  A refused post (ENOMEM) would
 * leave the loop waiting for ever: give up the whole run. */
static void *poster(void *arg)
{
    loop_t *loop = arg;
    for (long i = 0; i < bench.n; i++)
        if (loop_call_soon_threadsafe(loop, post_ran, (void *)(uintptr_t)i) == NULL)
            die("xthread: loop_call_soon_threadsafe refused a post");
    return NULL;
}

static result_t xthread(long n)
{
    loop_t *loop = new_loop();
    pthread_t thread;

    double t0 = cpu_ns();
    if (pthread_create(&thread, NULL, poster, loop) != 0)
        die("xthread: pthread_create failed");
    run(loop);
    double elapsed = cpu_ns() - t0;

    pthread_join(thread, NULL);
    close_loop(loop);
    return (result_t){bench.count, elapsed / (double)n};
}

#define WITH_THREADSAFE(fn) fn
#else
#define WITH_THREADSAFE(fn) NULL
#endif

/* ---- q2: article 004's 题目2, tasks (stage 09 on) ------------------------ */
#if STAGE >= 9
#include "task.h"

/* async def task(): await asyncio.sleep(0.01) */
typedef struct q2_task {
    coro_t coro;
    sleep_t sleep;
} q2_task_t;

static coro_status q2_task_step(coro_t *c)
{
    q2_task_t *t = (q2_task_t *)c;
    CORO_BEGIN(c);
    CORO_CALL(c, sleep_init(&t->sleep, 0.01));
    CORO_END(c);
}

static void q2_free(coro_t *c)
{
    free(c);
}

/* async def main(): start = loop.time(); await gather(*[task() for _ in
 * range(N)]); end = loop.time().  gather wraps each coroutine in a task, in
 * order: loop_gather takes futures, so main makes the tasks itself. */
typedef struct q2_main {
    coro_t coro;
    long n;
    task_t **tasks;   /* pre-faulted before the run */
    future_t **futures;
    future_t *gather;
    double start, end, cpu0, cpu1;
} q2_main_t;

static coro_status q2_main_step(coro_t *c)
{
    q2_main_t *m = (q2_main_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    m->start = loop_time(loop);
    m->cpu0 = cpu_ns();
    for (long i = 0; i < m->n; i++) {
        q2_task_t *t = malloc(sizeof *t);
        if (t == NULL)
            die("malloc");
        m->tasks[i] = loop_create_task(loop, coro_init(&t->coro, q2_task_step, "task", q2_free));
        if (m->tasks[i] == NULL)
            die_loop(loop, "loop_create_task");
        m->futures[i] = task_future(m->tasks[i]);
    }
    m->gather = loop_gather(loop, m->futures, (size_t)m->n, 0);
    if (m->gather == NULL)
        die_loop(loop, "loop_gather");
    CORO_AWAIT(c, m->gather);
    m->end = loop_time(loop);
    m->cpu1 = cpu_ns();
    CORO_END(c);
}

static q2_main_t q2_run(long n)
{
    q2_main_t m = {.n = n, .tasks = prefaulted_array((size_t)n, sizeof(task_t *)),
                   .futures = prefaulted_array((size_t)n, sizeof(future_t *))};
    loop_exception_t error;
    if (loop_run_main(coro_init(&m.coro, q2_main_step, "main", NULL), NULL, &error) < 0)
        die(error.message);
    bench.count = 0;
    for (long i = 0; i < n; i++) {
        bench.count += future_done(m.futures[i]) && !future_cancelled(m.futures[i]);
        task_release(m.tasks[i]);
    }
    future_release(m.gather);
    free(m.tasks);
    free(m.futures);
    return m;
}

static result_t q2(long n)
{
    q2_main_t m = q2_run(n);
    return (result_t){bench.count, (m.end - m.start) * 1e3};
}

static result_t q2_cpu(long n)
{
    q2_main_t m = q2_run(n);
    return (result_t){bench.count, (m.cpu1 - m.cpu0) / 1e6};
}
#define WITH_TASKS(fn) fn
#else
#define WITH_TASKS(fn) NULL
#endif

/* ---- The command line --------------------------------------------------- */

static const struct stage_workload {
    const char *name;
    long n;                  /* the default N */
    result_t (*run)(long n); /* NULL: this stage cannot do it (exit 3) */
} WORKLOADS[] = {
    {"batch", 1000000, WITH_CALL_SOON(batch)},
    {"chain", 1000000, WITH_CALL_SOON(chain)},
    {"timers", 1000000, WITH_TIMERS(timers)},
    {"churn", 1000000, WITH_CANCEL(churn)},
    {"churn_half", 1000000, WITH_CANCEL(churn_half)},
    {"pingpong", 200000, pingpong},
    {"xthread", 1000000, WITH_THREADSAFE(xthread)},
    {"timer_bytes", 1000000, WITH_MALLINFO(timer_bytes)},
    {"q2", 1000, WITH_TASKS(q2)},
    {"q2_cpu", 1000, WITH_TASKS(q2_cpu)},
};
enum { N_STAGE_WORKLOADS = sizeof WORKLOADS / sizeof WORKLOADS[0] };

static int bench_usage(const char *prog)
{
    fprintf(stderr, "usage: %s WORKLOAD [N]\n  WORKLOAD:", prog);
    for (int w = 0; w < N_STAGE_WORKLOADS; w++)
        fprintf(stderr, " %s", WORKLOADS[w].name);
    fprintf(stderr, "\n  N: a positive integer (default: the workload's own)\n");
    return 2;
}

/* N: digits only (strtol would take "-1", "+5" and " 5"), at most INT_MAX. */
static long parse_n(const char *s)
{
    char *end;
    errno = 0;
    long n = strtol(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || n <= 0 || n > INT_MAX)
        return -1;
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        return bench_usage(argv[0]);
    const struct stage_workload *w = NULL;
    for (int i = 0; i < N_STAGE_WORKLOADS; i++)
        if (strcmp(argv[1], WORKLOADS[i].name) == 0)
            w = &WORKLOADS[i];
    if (w == NULL)
        return bench_usage(argv[0]);
    long n = argc == 3 ? parse_n(argv[2]) : w->n;
    if (n <= 0)
        return bench_usage(argv[0]);
    if (w->run == NULL)
        return 3;

    bench.n = n;
    result_t r = w->run(n);
    long expected = n; /* every workload counts N (churn_half: timers scheduled) */
    if (bench.errors > 0) {
        fprintf(stderr, "loop_bench-%02d: %s %ld: %ld failed checks\n", STAGE, w->name, n,
                bench.errors);
        return 1;
    }
    if (r.count != expected) {
        fprintf(stderr, "loop_bench-%02d: %s %ld: counted %ld, expected %ld\n", STAGE,
                w->name, n, r.count, expected);
        return 1;
    }
    printf("%s %ld %.2f\n", w->name, r.count, r.value);
    return 0;
}
