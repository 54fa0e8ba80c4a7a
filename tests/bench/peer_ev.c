/* peer_ev.c -- chapter 11's loop benchmarks written for libev (4.33), the way
 * libev's users write them: every watcher (ev_idle, ev_timer, ev_io, ev_async)
 * lives in memory the program owns -- here arrays allocated and pre-faulted
 * before the timed region -- and ev_*_start only links it in.  The loop is
 * made with ev_loop_new(EVBACKEND_EPOLL): epoll, whatever libev would pick.
 *
 * build: cc -std=c11 -O2 -g -Wall -Wextra -Werror -o peer_ev tests/bench/peer_ev.c \
 *            -lev -lm -lpthread
 *        (Debian's libev-dev has no pkg-config file)
 * usage: peer_ev WORKLOAD [N]
 *        WORKLOAD: batch chain timers churn churn_half pingpong xthread timer_bytes
 *        prints `WORKLOAD COUNT VALUE` (VALUE: CPU ns per operation; bytes per
 *        pending timer for timer_bytes); exit 1 if a check fails, 2 on bad arguments.
 */
#include "peer_common.h"

#include <ev.h>

static struct ev_loop *loop;
static struct bench bench;
static double *delays; /* libev takes fractional seconds: d_i as it is */
static size_t ran;     /* callbacks that ran, timers that fired, round trips */

/* ---- batch: N idle watchers, each runs once and stops itself ---------- */

static void on_batch(struct ev_loop *l, ev_idle *w, int revents)
{
    (void)revents;
    ran++;
    ev_idle_stop(l, w); /* no active watcher left: ev_run returns */
}

static double batch(void)
{
    ev_idle *idles = prefaulted_array(bench.n, sizeof *idles);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        ev_idle_init(&idles[i], on_batch);
        ev_idle_start(loop, &idles[i]);
    }
    ev_run(loop, 0);
    uint64_t t1 = cpu_ns();
    free(idles);
    return (double)(t1 - t0);
}

/* ---- chain: one idle watcher, run once per loop iteration ------------- */

/* libev's "call me on the next iteration" is an ev_idle left started: each
 * iteration polls with a zero timeout and runs it once. */
static void on_chain(struct ev_loop *l, ev_idle *w, int revents)
{
    (void)revents;
    if (++ran == bench.n)
        ev_idle_stop(l, w);
}

static double chain(void)
{
    ev_idle idle;
    uint64_t t0 = cpu_ns();
    ev_idle_init(&idle, on_chain);
    ev_idle_start(loop, &idle);
    ev_run(loop, 0);
    uint64_t t1 = cpu_ns();
    return (double)(t1 - t0);
}

/* ---- timers ------------------------------------------------------------ */

static ev_timer *timers; /* the caller-owned array; index = w - timers */
static struct order_check order;

static void on_timer(struct ev_loop *l, ev_timer *w, int revents)
{
    (void)l, (void)revents;
    ran++; /* a timer with no repeat is stopped before its callback */
    order_check_fired(&order, delays[w - timers]);
}

static double timers_fired(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    ev_now_update(loop); /* deadlines count from the loop's cached now */
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        ev_timer_init(&timers[i], on_timer, delays[i], 0.);
        ev_timer_start(loop, &timers[i]);
    }
    ev_run(loop, 0);
    uint64_t t1 = cpu_ns();
    if (order.errors > 0)
        fail("timers: %zu timers fired before an earlier deadline", order.errors);
    free(timers);
    return (double)(t1 - t0);
}

/* ---- churn: start + stop at once; then one turn of the loop ----------- */

static void on_cancelled(struct ev_loop *l, ev_timer *w, int revents)
{
    (void)l, (void)w, (void)revents;
    fail("churn: a stopped timer fired");
}

static double churn(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    ev_now_update(loop);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        ev_timer_init(&timers[i], on_cancelled, delays[i], 0.);
        ev_timer_start(loop, &timers[i]);
        ev_timer_stop(loop, &timers[i]);
        ran++; /* scheduled */
    }
    ev_run(loop, EVRUN_NOWAIT);
    uint64_t t1 = cpu_ns();
    free(timers);
    return (double)(t1 - t0);
}

/* ---- churn_half: start N, stop the odd ones, one turn of the loop ----- */

static void on_half(struct ev_loop *l, ev_timer *w, int revents)
{
    (void)l, (void)w, (void)revents; /* due in 10 + [0,1) s: never in the timed turn */
    ran++;
}

static double churn_half(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    ev_now_update(loop);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        ev_timer_init(&timers[i], on_half, 10.0 + delays[i], 0.);
        ev_timer_start(loop, &timers[i]);
    }
    for (size_t i = 1; i < bench.n; i += 2)
        ev_timer_stop(loop, &timers[i]);
    ev_run(loop, EVRUN_NOWAIT); /* one turn; half the timers still pending */
    uint64_t t1 = cpu_ns();
    if (ran != 0)
        fail("churn_half: %zu timers fired in the first turn", ran);
    for (size_t i = 0; i < bench.n; i += 2)
        ev_timer_stop(loop, &timers[i]);
    ran = bench.n;
    free(timers);
    return (double)(t1 - t0);
}

/* ---- pingpong: an io watcher on each end of a socketpair -------------- */

static int fds[2];
static ev_io end_a, end_b;

static void on_a(struct ev_loop *l, ev_io *w, int revents)
{
    (void)revents;
    read_byte(w->fd);
    if (++ran == bench.n) {
        ev_io_stop(l, w); /* both stopped: ev_run returns */
        ev_io_stop(l, &end_b);
        return;
    }
    write_byte(w->fd);
}

static void on_b(struct ev_loop *l, ev_io *w, int revents)
{
    (void)l, (void)revents;
    read_byte(w->fd);
    write_byte(w->fd);
}

static double pingpong(void)
{
    make_socketpair(fds);
    ev_io_init(&end_a, on_a, fds[0], EV_READ);
    ev_io_init(&end_b, on_b, fds[1], EV_READ);
    ev_io_start(loop, &end_a);
    ev_io_start(loop, &end_b);
    uint64_t t0 = cpu_ns();
    write_byte(fds[0]);
    ev_run(loop, 0);
    uint64_t t1 = cpu_ns();
    close(fds[0]);
    close(fds[1]);
    return (double)(t1 - t0);
}

/* ---- xthread: a FIFO of posts and an ev_async to wake the loop -------- */

/* ev_async_send is the one libev call that is safe from another thread, and
 * it coalesces: many sends may wake the loop once.  So every post goes into
 * the mutex-protected FIFO of peer_common.h, and the async callback runs all
 * that is queued, in order. */
static struct post_queue posts;
static struct post *nodes;
static ev_async wakeup;

static void on_post(struct post *p)
{
    check_post_order(p->index, &ran);
    if (ran == bench.n)
        ev_break(loop, EVBREAK_ALL); /* wakeup stays started: the poster may still send */
}

static void on_wakeup(struct ev_loop *l, ev_async *w, int revents)
{
    (void)l, (void)w, (void)revents;
    post_queue_run_all(&posts);
}

static void *poster(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < bench.n; i++) {
        nodes[i].run = on_post;
        nodes[i].index = i;
        post_queue_push(&posts, &nodes[i]);
        ev_async_send(loop, &wakeup);
    }
    return NULL;
}

static double xthread(void)
{
    nodes = prefaulted_array(bench.n, sizeof *nodes);
    post_queue_init(&posts);
    ev_async_init(&wakeup, on_wakeup);
    ev_async_start(loop, &wakeup);
    pthread_t thread;
    uint64_t t0 = cpu_ns();
    if (pthread_create(&thread, NULL, poster, NULL) != 0)
        fail("pthread_create failed");
    ev_run(loop, 0);
    uint64_t t1 = cpu_ns();
    pthread_join(thread, NULL); /* its last ev_async_send is done */
    ev_async_stop(loop, &wakeup);
    post_queue_destroy(&posts);
    free(nodes);
    return (double)(t1 - t0);
}

/* ---- timer_bytes: N timers pending, what they cost in memory ---------- */

/* libev keeps the caller's ev_timer and, in its heap, a pointer plus a
 * cached deadline per timer (an array that doubles as it grows). */
static double timer_bytes(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    ev_now_update(loop);
    size_t before = heap_in_use();
    for (size_t i = 0; i < bench.n; i++) {
        ev_timer_init(&timers[i], on_cancelled, 1000.0 + delays[i], 0.);
        ev_timer_start(loop, &timers[i]);
    }
    size_t after = heap_in_use();
    for (size_t i = 0; i < bench.n; i++)
        ran += ev_is_active(&timers[i]) != 0;
    for (size_t i = 0; i < bench.n; i++)
        ev_timer_stop(loop, &timers[i]);
    free(timers);
    return (double)(after - before) + (double)(bench.n * sizeof *timers);
}

int main(int argc, char **argv)
{
    bench = parse_args(argc, argv);
    delays = make_delays(bench.n);
    loop = ev_loop_new(EVBACKEND_EPOLL);
    if (loop == NULL || ev_backend(loop) != EVBACKEND_EPOLL)
        fail("ev_loop_new: no epoll backend");
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
    ev_loop_destroy(loop);
    free(delays);
    report(bench, ran, total);
    return 0;
}
