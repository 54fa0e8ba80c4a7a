/* peer_uv.c -- chapter 11's loop benchmarks written for libuv (1.44), the way
 * libuv's users write them: every handle (uv_idle_t, uv_timer_t, uv_poll_t,
 * uv_async_t) lives in memory the program owns -- here arrays allocated and
 * pre-faulted before the timed region -- and the library only links them in.
 * The backend is libuv's default on Linux, epoll (1.44 has no io_uring).
 *
 * build: cc -std=c11 -O2 -g -Wall -Wextra -Werror -o peer_uv tests/bench/peer_uv.c \
 *            $(pkg-config --cflags --libs libuv) -lm -lpthread
 * usage: peer_uv WORKLOAD [N]
 *        WORKLOAD: batch chain timers churn churn_half pingpong xthread timer_bytes
 *        prints `WORKLOAD COUNT VALUE` (VALUE: CPU ns per operation; bytes per
 *        pending timer for timer_bytes); exit 1 if a check fails, 2 on bad arguments.
 */
#include "peer_common.h"

#include <math.h>
#include <uv.h>

static uv_loop_t loop;
static struct bench bench;
static double *delays;
static size_t ran; /* callbacks that ran, timers that fired, round trips */

static void check(int rc, const char *what)
{
    if (rc < 0)
        fail("%s: %s", what, uv_strerror(rc));
}

/* libuv's timers count whole milliseconds (uint64_t): d_i is rounded to the
 * nearest one, so deadlines less than 1 ms apart may fire in either order. */
static uint64_t delay_ms(double seconds)
{
    return (uint64_t)llround(seconds * 1000.0);
}

/* Handles must be closed before uv_loop_close; closing runs in the loop. */
static void close_all(uv_handle_t *first, size_t size, size_t n)
{
    for (size_t i = 0; i < n; i++)
        uv_close((uv_handle_t *)((char *)first + i * size), NULL);
    check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run (closing)");
}

/* ---- batch: N idle handles, each runs once and stops itself ----------- */

/* @region batch */
static void on_batch(uv_idle_t *idle)
{
    ran++;
    uv_idle_stop(idle); /* no active handle left: uv_run returns */
}

static double batch(void)
{
    uv_idle_t *idles = prefaulted_array(bench.n, sizeof *idles);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        uv_idle_init(&loop, &idles[i]);
        uv_idle_start(&idles[i], on_batch);
    }
    check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run");
    uint64_t t1 = cpu_ns();
    close_all((uv_handle_t *)idles, sizeof *idles, bench.n);
    free(idles);
    return (double)(t1 - t0);
}
/* @end batch */

/* ---- chain: one idle handle, run once per loop iteration -------------- */

/* libuv's "call me on the next iteration" is an idle handle left started:
 * each iteration runs it once (and polls with a zero timeout). */
static void on_chain(uv_idle_t *idle)
{
    if (++ran == bench.n)
        uv_idle_stop(idle);
}

static double chain(void)
{
    uv_idle_t idle;
    uint64_t t0 = cpu_ns();
    uv_idle_init(&loop, &idle);
    uv_idle_start(&idle, on_chain);
    check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run");
    uint64_t t1 = cpu_ns();
    close_all((uv_handle_t *)&idle, sizeof idle, 1);
    return (double)(t1 - t0);
}

/* ---- timers ------------------------------------------------------------ */

static uv_timer_t *timers; /* the caller-owned array; index = t - timers */
static struct order_check order;

static void on_timer(uv_timer_t *t)
{
    ran++;
    order_check_fired(&order, delays[t - timers]);
}

static double timers_fired(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    uv_update_time(&loop); /* deadlines count from the loop's cached now */
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        uv_timer_init(&loop, &timers[i]);
        uv_timer_start(&timers[i], on_timer, delay_ms(delays[i]), 0);
    }
    check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run");
    uint64_t t1 = cpu_ns();
    if (order.errors > 0)
        fail("timers: %zu timers fired before an earlier deadline", order.errors);
    close_all((uv_handle_t *)timers, sizeof *timers, bench.n);
    free(timers);
    return (double)(t1 - t0);
}

/* ---- churn: start + stop at once; then one turn of the loop ----------- */

static void on_cancelled(uv_timer_t *t)
{
    (void)t;
    fail("churn: a stopped timer fired");
}

static double churn(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    uv_update_time(&loop);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        uv_timer_init(&loop, &timers[i]);
        uv_timer_start(&timers[i], on_cancelled, delay_ms(delays[i]), 0);
        uv_timer_stop(&timers[i]);
        ran++; /* scheduled */
    }
    check(uv_run(&loop, UV_RUN_NOWAIT), "uv_run");
    uint64_t t1 = cpu_ns();
    close_all((uv_handle_t *)timers, sizeof *timers, bench.n);
    free(timers);
    return (double)(t1 - t0);
}

/* ---- churn_half: start N, stop the odd ones, one turn of the loop ----- */

static void on_half(uv_timer_t *t)
{
    (void)t; /* due in 10 + [0,1) s: never in the one turn that is timed */
    ran++;
}

static double churn_half(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    uv_update_time(&loop);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        uv_timer_init(&loop, &timers[i]);
        uv_timer_start(&timers[i], on_half, delay_ms(10.0 + delays[i]), 0);
    }
    for (size_t i = 1; i < bench.n; i += 2)
        uv_timer_stop(&timers[i]);
    uv_run(&loop, UV_RUN_NOWAIT); /* one turn; half the timers still pending */
    uint64_t t1 = cpu_ns();
    if (ran != 0)
        fail("churn_half: %zu timers fired in the first turn", ran);
    ran = bench.n;
    close_all((uv_handle_t *)timers, sizeof *timers, bench.n);
    free(timers);
    return (double)(t1 - t0);
}

/* ---- pingpong: a poll handle on each end of a socketpair -------------- */

/* uv_poll_t watches a descriptor the program owns, as add_reader does; a
 * uv_pipe_t stream would add libuv's read buffers and write requests. */
static int fds[2];
static uv_poll_t end_a, end_b;

static void on_a(uv_poll_t *h, int status, int events)
{
    (void)events;
    check(status, "poll A");
    read_byte(fds[0]);
    if (++ran == bench.n) {
        uv_poll_stop(h); /* both stopped: uv_run returns */
        uv_poll_stop(&end_b);
        return;
    }
    write_byte(fds[0]);
}

static void on_b(uv_poll_t *h, int status, int events)
{
    (void)h, (void)events;
    check(status, "poll B");
    read_byte(fds[1]);
    write_byte(fds[1]);
}

static double pingpong(void)
{
    make_socketpair(fds);
    check(uv_poll_init(&loop, &end_a, fds[0]), "uv_poll_init");
    check(uv_poll_init(&loop, &end_b, fds[1]), "uv_poll_init");
    check(uv_poll_start(&end_a, UV_READABLE, on_a), "uv_poll_start");
    check(uv_poll_start(&end_b, UV_READABLE, on_b), "uv_poll_start");
    uint64_t t0 = cpu_ns();
    write_byte(fds[0]);
    check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run");
    uint64_t t1 = cpu_ns();
    uv_close((uv_handle_t *)&end_a, NULL);
    uv_close((uv_handle_t *)&end_b, NULL);
    check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run (closing)");
    close(fds[0]);
    close(fds[1]);
    return (double)(t1 - t0);
}

/* ---- xthread: a FIFO of posts and a uv_async_t to wake the loop ------- */

/* uv_async_send is the one libuv call that is safe from another thread, and
 * it coalesces: many sends may wake the loop once.  So every post goes into
 * the mutex-protected FIFO of peer_common.h, and the async callback runs all
 * that is queued, in order. */
static struct post_queue posts;
static struct post *nodes;
static uv_async_t wakeup;

static void on_post(struct post *p)
{
    check_post_order(p->index, &ran);
    if (ran == bench.n)
        uv_stop(&loop); /* wakeup stays open: the poster may still send */
}

static void on_wakeup(uv_async_t *async)
{
    (void)async;
    post_queue_run_all(&posts);
}

static void *poster(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < bench.n; i++) {
        nodes[i].run = on_post;
        nodes[i].index = i;
        post_queue_push(&posts, &nodes[i]);
        uv_async_send(&wakeup);
    }
    return NULL;
}

static double xthread(void)
{
    nodes = prefaulted_array(bench.n, sizeof *nodes);
    post_queue_init(&posts);
    check(uv_async_init(&loop, &wakeup, on_wakeup), "uv_async_init");
    pthread_t thread;
    uint64_t t0 = cpu_ns();
    if (pthread_create(&thread, NULL, poster, NULL) != 0)
        fail("pthread_create failed");
    check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run");
    uint64_t t1 = cpu_ns();
    pthread_join(thread, NULL); /* its last uv_async_send is done */
    uv_close((uv_handle_t *)&wakeup, NULL);
    check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run (closing)");
    post_queue_destroy(&posts);
    free(nodes);
    return (double)(t1 - t0);
}

/* ---- timer_bytes: N timers pending, what they cost in memory ---------- */

/* libuv's timer heap is intrusive (the links are in uv_timer_t): starting a
 * timer allocates nothing, so the bytes are the caller's array. */
static double timer_bytes(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    uv_update_time(&loop);
    size_t before = heap_in_use();
    for (size_t i = 0; i < bench.n; i++) {
        uv_timer_init(&loop, &timers[i]);
        uv_timer_start(&timers[i], on_cancelled, delay_ms(1000.0 + delays[i]), 0);
    }
    size_t after = heap_in_use();
    for (size_t i = 0; i < bench.n; i++)
        ran += uv_is_active((uv_handle_t *)&timers[i]) != 0;
    close_all((uv_handle_t *)timers, sizeof *timers, bench.n);
    free(timers);
    return (double)(after - before) + (double)(bench.n * sizeof *timers);
}

int main(int argc, char **argv)
{
    bench = parse_args(argc, argv);
    delays = make_delays(bench.n);
    check(uv_loop_init(&loop), "uv_loop_init");
    double total = 0;
    switch (bench.workload) {
    case BATCH: total = batch(); break;
    case CHAIN: total = chain(); break;
    case TIMERS: total = timers_fired(); break;
    case CHURN: total = churn(); break;
    case CHURN_HALF: total = churn_half(); break;
    case PINGPONG: total = pingpong(); break;
    case XTHREAD: total = xthread(); break;
    case TIMER_BYTES: total = timer_bytes(); break;
    case N_WORKLOADS: break;
    }
    check(uv_loop_close(&loop), "uv_loop_close");
    free(delays);
    report(bench, ran, total);
    return 0;
}
