/* peer_event.c -- chapter 11's loop benchmarks written for libevent (2.1), the
 * way libevent's users write them: every `struct event` lives in memory the
 * program owns -- here arrays allocated and pre-faulted before the timed
 * region -- and is set up with event_assign (event_new would malloc each one).
 * The base avoids "select" and "poll", which leaves epoll on Linux.
 *
 * build: cc -std=c11 -O2 -g -Wall -Wextra -Werror -o peer_event tests/bench/peer_event.c \
 *            $(pkg-config --cflags --libs libevent_core libevent_pthreads) -lm -lpthread
 * usage: peer_event WORKLOAD [N]
 *        WORKLOAD: batch chain timers churn churn_half pingpong xthread timer_bytes
 *        prints `WORKLOAD COUNT VALUE` (VALUE: CPU ns per operation; bytes per
 *        pending timer for timer_bytes); exit 1 if a check fails, 2 on bad arguments.
 */
#include "peer_common.h"

#include <event2/event.h>
#include <event2/event_struct.h> /* sizeof(struct event), for a caller-owned array */
#include <event2/thread.h>

static struct event_base *base;
static struct bench bench;
static double *delays;
static size_t ran; /* callbacks that ran, timers that fired, round trips */

/* libevent takes a struct timeval: d_i rounded to the microsecond. */
static struct timeval timeval_of(double seconds)
{
    long long us = (long long)(seconds * 1e6 + 0.5);
    struct timeval tv = {.tv_sec = (time_t)(us / 1000000), .tv_usec = (suseconds_t)(us % 1000000)};
    return tv;
}

static struct event_base *new_epoll_base(void)
{
    struct event_config *cfg = event_config_new();
    if (cfg == NULL)
        fail("event_config_new failed");
    event_config_avoid_method(cfg, "select");
    event_config_avoid_method(cfg, "poll");
    struct event_base *b = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (b == NULL || strcmp(event_base_get_method(b), "epoll") != 0)
        fail("event_base_new_with_config: no epoll backend");
    return b;
}

/* ---- batch: N events made active from outside the loop ---------------- */

static void on_batch(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    ran++; /* an event that was never added is done once it ran */
}

static double batch(void)
{
    struct event *events = prefaulted_array(bench.n, sizeof *events);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        event_assign(&events[i], base, -1, 0, on_batch, NULL);
        event_active(&events[i], EV_TIMEOUT, 0);
    }
    /* Returns once nothing is active and nothing added is left. */
    if (event_base_dispatch(base) < 0)
        fail("event_base_dispatch failed");
    uint64_t t1 = cpu_ns();
    free(events);
    return (double)(t1 - t0);
}

/* ---- chain: one timer that adds itself again, due at once ------------ */

/* The chain is "run me on the loop's next turn": a zero timeout, polled
 * for like any other (one epoll_wait per callback, as libuv's idle watcher
 * and our call_soon).  libevent's other idiom, event_active() from its own
 * callback, never polls: libevent drains its active queue, new entries
 * included, before it polls again (strace: one epoll_wait for 10,000
 * callbacks, 17 ns a callback), which is not what call_soon promises. */
static void on_chain(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    static const struct timeval zero = {0, 0};
    if (++ran < bench.n)
        evtimer_add((struct event *)arg, &zero);
}

static double chain(void)
{
    struct event ev;
    const struct timeval zero = {0, 0};
    uint64_t t0 = cpu_ns();
    evtimer_assign(&ev, base, on_chain, &ev);
    evtimer_add(&ev, &zero);
    if (event_base_dispatch(base) < 0)
        fail("event_base_dispatch failed");
    uint64_t t1 = cpu_ns();
    return (double)(t1 - t0);
}

/* ---- timers ------------------------------------------------------------ */

static struct event *timers; /* the caller-owned array; arg = its index */
static struct order_check order;

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    ran++;
    order_check_fired(&order, delays[(uintptr_t)arg]);
}

/* Outside the loop, libevent reads the clock for every evtimer_add: adding a
 * million timers takes a few hundred ms, and a timer added last would fire
 * that much after one of a smaller delay added first.  Inside a callback it
 * uses the time cached for the current iteration, as libuv and libev do
 * outside theirs (uv_now, ev_now): so the timers are added by a callback, all
 * N deadlines count from one now, and they fire in the order of d_i. */
static void add_timers(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    for (size_t i = 0; i < bench.n; i++) {
        struct timeval tv = timeval_of(delays[i]);
        evtimer_assign(&timers[i], base, on_timer, (void *)(uintptr_t)i);
        evtimer_add(&timers[i], &tv);
    }
}

static double timers_fired(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    struct event starter;
    uint64_t t0 = cpu_ns();
    event_assign(&starter, base, -1, 0, add_timers, NULL);
    event_active(&starter, EV_TIMEOUT, 0);
    if (event_base_dispatch(base) < 0)
        fail("event_base_dispatch failed");
    uint64_t t1 = cpu_ns();
    if (order.errors > 0)
        fail("timers: %zu timers fired before an earlier deadline", order.errors);
    free(timers);
    return (double)(t1 - t0);
}

/* ---- churn: add + del at once; then one turn of the loop -------------- */

static void on_cancelled(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    fail("churn: a deleted timer fired");
}

static double churn(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        struct timeval tv = timeval_of(delays[i]);
        evtimer_assign(&timers[i], base, on_cancelled, NULL);
        evtimer_add(&timers[i], &tv);
        evtimer_del(&timers[i]);
        ran++; /* scheduled */
    }
    if (event_base_loop(base, EVLOOP_NONBLOCK) < 0)
        fail("event_base_loop failed");
    uint64_t t1 = cpu_ns();
    free(timers);
    return (double)(t1 - t0);
}

/* ---- churn_half: add N, delete the odd ones, one turn of the loop ----- */

static void on_half(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg; /* due in 10 + [0,1) s: never in the timed turn */
    ran++;
}

static double churn_half(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    uint64_t t0 = cpu_ns();
    for (size_t i = 0; i < bench.n; i++) {
        struct timeval tv = timeval_of(10.0 + delays[i]);
        evtimer_assign(&timers[i], base, on_half, (void *)(uintptr_t)i);
        evtimer_add(&timers[i], &tv);
    }
    for (size_t i = 1; i < bench.n; i += 2)
        evtimer_del(&timers[i]);
    if (event_base_loop(base, EVLOOP_NONBLOCK) < 0) /* one turn; half still pending */
        fail("event_base_loop failed");
    uint64_t t1 = cpu_ns();
    if (ran != 0)
        fail("churn_half: %zu timers fired in the first turn", ran);
    for (size_t i = 0; i < bench.n; i += 2)
        evtimer_del(&timers[i]);
    ran = bench.n;
    free(timers);
    return (double)(t1 - t0);
}

/* ---- pingpong: a persistent read event on each end of a socketpair ---- */

static int fds[2];
static struct event end_a, end_b;

static void on_a(evutil_socket_t fd, short what, void *arg)
{
    (void)what, (void)arg;
    read_byte(fd);
    if (++ran == bench.n) {
        event_del(&end_a); /* nothing added is left: the loop returns */
        event_del(&end_b);
        return;
    }
    write_byte(fd);
}

static void on_b(evutil_socket_t fd, short what, void *arg)
{
    (void)what, (void)arg;
    read_byte(fd);
    write_byte(fd);
}

static double pingpong(void)
{
    make_socketpair(fds);
    event_assign(&end_a, base, fds[0], EV_READ | EV_PERSIST, on_a, NULL);
    event_assign(&end_b, base, fds[1], EV_READ | EV_PERSIST, on_b, NULL);
    event_add(&end_a, NULL);
    event_add(&end_b, NULL);
    uint64_t t0 = cpu_ns();
    write_byte(fds[0]);
    if (event_base_dispatch(base) < 0)
        fail("event_base_dispatch failed");
    uint64_t t1 = cpu_ns();
    close(fds[0]);
    close(fds[1]);
    return (double)(t1 - t0);
}

/* ---- xthread: event_base_once from the posting thread ----------------- */

/* With evthread_use_pthreads() the base has a lock, and a thread may make
 * events active in it.  event_base_once(-1, EV_TIMEOUT, zero timeout) is
 * libevent's "run this soon": it mallocs one event per post, activates it
 * at once, in order, and wakes the loop (which coalesces the wake-ups). */
static void on_post(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    check_post_order((uintptr_t)arg, &ran);
    if (ran == bench.n)
        event_base_loopbreak(base);
}

static void *poster(void *arg)
{
    (void)arg;
    const struct timeval zero = {0, 0};
    for (size_t i = 0; i < bench.n; i++)
        if (event_base_once(base, -1, EV_TIMEOUT, on_post, (void *)(uintptr_t)i, &zero) != 0)
            fail("event_base_once failed");
    return NULL;
}

static double xthread(void)
{
    pthread_t thread;
    uint64_t t0 = cpu_ns();
    if (pthread_create(&thread, NULL, poster, NULL) != 0)
        fail("pthread_create failed");
    /* Nothing is added until the poster's first event: don't return early. */
    if (event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY) < 0)
        fail("event_base_loop failed");
    uint64_t t1 = cpu_ns();
    pthread_join(thread, NULL);
    return (double)(t1 - t0);
}

/* ---- timer_bytes: N timers pending, what they cost in memory ---------- */

/* libevent keeps the caller's struct event and, in its min-heap, a pointer
 * per timer (an array that doubles as it grows). */
static double timer_bytes(void)
{
    timers = prefaulted_array(bench.n, sizeof *timers);
    size_t before = heap_in_use();
    for (size_t i = 0; i < bench.n; i++) {
        struct timeval tv = timeval_of(1000.0 + delays[i]);
        evtimer_assign(&timers[i], base, on_cancelled, NULL);
        evtimer_add(&timers[i], &tv);
    }
    size_t after = heap_in_use();
    ran = (size_t)event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
    for (size_t i = 0; i < bench.n; i++)
        evtimer_del(&timers[i]);
    free(timers);
    return (double)(after - before) + (double)(bench.n * sizeof *timers);
}

int main(int argc, char **argv)
{
    bench = parse_args(argc, argv);
    delays = make_delays(bench.n);
    /* Only the threaded workload pays for the base's lock, as only a
     * threaded program would. */
    if (bench.workload == XTHREAD && evthread_use_pthreads() != 0)
        fail("evthread_use_pthreads failed");
    base = new_epoll_base();
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
    event_base_free(base);
    libevent_global_shutdown(); /* frees the lock functions' state: valgrind stays quiet */
    free(delays);
    report(bench, ran, total);
    return 0;
}
