/* check_threadsafe.c -- loop_call_soon_threadsafe and the self-pipe (chapter 06).
 *
 * Written against chapter 06's loop.h and run against every later stage:
 *   - stress: 4 threads x 250,000 calls while the loop runs: none lost,
 *     none run twice, each thread's calls in the order it made them; with
 *     every wake-up (pipe, eventfd, each coalesced);
 *   - a loop asleep on a one-day timer wakes within milliseconds (real
 *     clock; asserted < 100 ms, the measured value is printed in the log);
 *   - a full pipe (EAGAIN on the write) loses nothing, and the loop can
 *     still be woken afterwards;
 *   - stop from another thread, through a threadsafe callback;
 *   - the lost-wake-up window of coalescing: a call made between the
 *     loop's look at the ready deque and its poll still wakes it, made from
 *     the wait hook and, earlier, from the look hook (right after the look);
 *   - push, then write: a sender stalled just after its write to the
 *     self-pipe (a wrapper of write(), below) until the loop has woken,
 *     drained the pipe and looked again still wakes it;
 *   - from the loop's own thread: FIFO with call_soon, no extra tick;
 *   - a handle cancelled from another thread (through the loop's thread,
 *     which retained it for that thread: handles are not thread-safe);
 *   - refusals: NULL callback, closed loop (errno only).
 * A lost wake-up fails, it does not hang: every test whose loop could sleep
 * through a call has a watchdog, a timer of the loop that stops it and
 * fails the test (2 s in the window tests, 20 s elsewhere).
 *
 * Scale: the stress test makes 4 x 250,000 calls (about 1 s).  Under
 * valgrind (the test drivers set CK_FORK=no there) and under a sanitizer it
 * makes 4 x 10,000; the environment variable STRESS_CALLS=N sets the calls
 * per thread explicitly.
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/NN-slug tests/unit/check_threadsafe.c build/NN-slug/libloop.a \
 *      $(pkg-config --cflags --libs check) -lpthread
 */
#define _GNU_SOURCE /* RTLD_NEXT, for the wrapper of write() */
#include "loop.h"

#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "vloop.h" /* virtual_loop(), finish(), ticks, ran */

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define NTHREADS 4
#define SEQ_BITS 24 /* arg = thread << SEQ_BITS | seq */

static long stress_calls(void)
{
    const char *s = getenv("STRESS_CALLS");
    if (s != NULL && atol(s) > 0 && atol(s) < (1L << SEQ_BITS))
        return atol(s);
    const char *fork = getenv("CK_FORK");
    if (SANITIZED || (fork != NULL && strcmp(fork, "no") == 0))
        return 10000;
    return 250000;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

static void never(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    ck_abort_msg("the one-day timer fired");
}

/* A lost wake-up must fail, not hang.  A test whose loop could sleep
 * through a call also has a watchdog: a timer of the loop itself (a timer
 * needs no wake-up) that stops the loop and notes that it fired. */
#define WATCHDOG 2.0      /* s: the window tests, where a call is due at once */
#define FAR_WATCHDOG 20.0 /* s: the others (generous: valgrind, sanitizers) */

static int watchdog_fired;
static double watchdog_after;

static void watchdog(loop_t *loop, void *arg)
{
    (void)arg;
    watchdog_fired = 1;
    loop_stop(loop);
}

static void arm_watchdog(loop_t *loop, double seconds)
{
    watchdog_fired = 0;
    watchdog_after = seconds;
    ck_assert_ptr_nonnull(loop_call_later(loop, seconds, watchdog, NULL));
}

#define ck_assert_no_watchdog(what)                                                        \
    ck_assert_msg(!watchdog_fired, "%s: the loop slept until its %.0f s watchdog: a lost " \
                  "wake-up", (what), watchdog_after)

static const struct mode {
    const char *name;
    loop_wakeup how;
    int coalesce;
} modes[] = {
    {"pipe", LOOP_WAKEUP_PIPE, 0},
    {"eventfd", LOOP_WAKEUP_EVENTFD, 0},
    {"coalesced pipe", LOOP_WAKEUP_PIPE, 1},
    {"coalesced eventfd", LOOP_WAKEUP_EVENTFD, 1},
};

static loop_t *new_loop(int mode)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_msg(loop_set_wakeup(loop, modes[mode].how, modes[mode].coalesce) == 0, "%s",
                  loop_error(loop));
    return loop;
}

static loop_t *handle_loop; /* the loop of cancel_from_another_thread */

/* ---- stress ----------------------------------------------------------- */

/* Touched by the loop's thread only, while it runs; read after the join. */
static long next_seq[NTHREADS], received, expected_total;
static int out_of_order;

static void count(loop_t *loop, void *arg)
{
    uintptr_t v = (uintptr_t)arg;
    long t = (long)(v >> SEQ_BITS), seq = (long)(v & ((1u << SEQ_BITS) - 1));
    if (seq != next_seq[t])
        out_of_order++;
    next_seq[t] = seq + 1;
    if (++received == expected_total)
        loop_stop(loop);
}

typedef struct sender {
    loop_t *loop;
    long id, calls, refused;
} sender_t;

static void *send_all(void *arg)
{
    sender_t *s = arg;
    for (long i = 0; i < s->calls; i++) {
        uintptr_t v = ((uintptr_t)s->id << SEQ_BITS) | (uintptr_t)i;
        if (loop_call_soon_threadsafe(s->loop, count, (void *)v) == NULL)
            s->refused++;
        if (i % 4096 == 4095)
            sleep_ms(1); /* now and then, let the loop catch up and fall asleep */
    }
    return NULL;
}

START_TEST(stress_none_lost_none_twice_order_kept)
{
    long calls = stress_calls();
    loop_t *loop = new_loop(_i);
    memset(next_seq, 0, sizeof next_seq);
    received = out_of_order = 0;
    expected_total = NTHREADS * calls;
    /* A far timer so that the loop sleeps in select() between bursts. */
    ck_assert_ptr_nonnull(loop_call_later(loop, 86400, never, NULL));
    arm_watchdog(loop, FAR_WATCHDOG);
    sender_t senders[NTHREADS];
    pthread_t th[NTHREADS];
    double t0 = now();
    for (long t = 0; t < NTHREADS; t++) {
        senders[t] = (sender_t){loop, t, calls, 0};
        ck_assert_int_eq(pthread_create(&th[t], NULL, send_all, &senders[t]), 0);
    }
    ck_assert_int_eq(loop_run_forever(loop), 0);
    for (int t = 0; t < NTHREADS; t++)
        ck_assert_int_eq(pthread_join(th[t], NULL), 0);
    double t1 = now();
    printf("stress (%s): %d threads x %ld calls in %.3f s, %lu writes to the self-pipe\n",
           modes[_i].name, NTHREADS, calls, t1 - t0, loop_wakeup_writes(loop));
    ck_assert_no_watchdog(modes[_i].name);
    for (int t = 0; t < NTHREADS; t++) {
        ck_assert_int_eq(senders[t].refused, 0);
        ck_assert_int_eq(next_seq[t], calls); /* the last one seen was the last sent */
    }
    ck_assert_int_eq(received, expected_total); /* none lost, none twice ... */
    ck_assert_int_eq(out_of_order, 0);          /* ... each thread's order kept */
    if (!modes[_i].coalesce)
        ck_assert_uint_eq(loop_wakeup_writes(loop), (unsigned long)expected_total);
    finish(loop);
}
END_TEST

/* ---- wake-up latency -------------------------------------------------- */

static double woke_at;

static void note_wake(loop_t *loop, void *arg)
{
    (void)arg;
    woke_at = now();
    loop_stop(loop);
}

static void *call_after_50ms(void *arg)
{
    sleep_ms(50); /* the loop is asleep in select() by then */
    double *sent_at = arg;
    *sent_at = now();
    loop_t *loop = *(loop_t **)(sent_at + 1);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, note_wake, NULL));
    return NULL;
}

START_TEST(asleep_on_one_day_timer_wakes_within_ms)
{
    loop_t *loop = new_loop(_i);
    ck_assert_ptr_nonnull(loop_call_later(loop, 86400, never, NULL));
    arm_watchdog(loop, FAR_WATCHDOG);
    struct {
        double sent_at;
        loop_t *loop;
    } msg = {0, loop};
    pthread_t th;
    woke_at = 0;
    ck_assert_int_eq(pthread_create(&th, NULL, call_after_50ms, &msg), 0);
    double t0 = now();
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    double latency = woke_at - msg.sent_at;
    printf("wake-up (%s): asleep %.1f ms, woken %.3f ms after the call\n", modes[_i].name,
           (msg.sent_at - t0) * 1e3, latency * 1e3);
    ck_assert_no_watchdog(modes[_i].name);
    ck_assert_msg(latency >= 0 && latency < 0.100, "woken after %.3f s", latency);
    ck_assert_uint_ge(loop_wakeup_writes(loop), 1);
    finish(loop);
}
END_TEST

/* ---- a full pipe ------------------------------------------------------ */

#define OVERFILL 70000 /* more one-byte writes than a 64 KiB pipe holds */

static long seen;

static void count_up(loop_t *loop, void *arg)
{
    (void)arg;
    if (++seen == OVERFILL)
        loop_stop(loop);
}

static void *overfill(void *arg)
{
    loop_t *loop = arg;
    for (int i = 0; i < OVERFILL; i++)
        ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, count_up, NULL));
    return NULL;
}

static void *wake_later(void *arg)
{
    sleep_ms(50);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(arg, note_wake, NULL));
    return NULL;
}

START_TEST(full_pipe_loses_nothing)
{
    loop_t *loop = new_loop(0); /* the pipe: 64 KiB, one byte a call */
    seen = 0;
    pthread_t th;
    /* The loop is not running: nobody drains the pipe, and the writes after
     * the 65,536th fail with EAGAIN. */
    ck_assert_int_eq(pthread_create(&th, NULL, overfill, loop), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_uint_eq(loop_wakeup_writes(loop), OVERFILL);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(seen, OVERFILL);
    /* The pipe was drained: asleep again, the loop still wakes. */
    ck_assert_ptr_nonnull(loop_call_later(loop, 86400, never, NULL));
    arm_watchdog(loop, FAR_WATCHDOG);
    woke_at = 0;
    double t0 = now();
    ck_assert_int_eq(pthread_create(&th, NULL, wake_later, loop), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_no_watchdog("after a full pipe");
    ck_assert_msg(woke_at - t0 < 1.0, "the loop slept %.3f s", woke_at - t0);
    finish(loop);
}
END_TEST

/* ---- stop from another thread ----------------------------------------- */

static void *stop_later(void *arg)
{
    sleep_ms(20);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(arg, stop_cb, NULL));
    return NULL;
}

START_TEST(stop_from_another_thread)
{
    loop_t *loop = new_loop(_i);
    ck_assert_ptr_nonnull(loop_call_later(loop, 86400, never, NULL));
    arm_watchdog(loop, FAR_WATCHDOG);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, stop_later, loop), 0);
    double t0 = now();
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_no_watchdog(modes[_i].name);
    ck_assert_double_lt(now() - t0, 1.0);
    finish(loop);
}
END_TEST

/* ---- the lost-wake-up window ------------------------------------------ */

/* The wait hook runs on the loop's thread after it has looked at the ready
 * deque (found it empty: the timeout is the timer's, 1 s) and before the
 * poll.  A call made by another thread right there -- the hook starts a
 * thread and waits for it -- must still wake the poll: the coalescing flag
 * must already say "may be asleep". */
static int hooked;

static void *call_once(void *arg)
{
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(arg, note_wake, NULL));
    return NULL;
}

static double call_in_the_window(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (!hooked++) {
        ck_assert_double_gt(timeout, 0.5); /* the loop means to sleep */
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, call_once, loop), 0);
        ck_assert_int_eq(pthread_join(th, NULL), 0);
    }
    return timeout;
}

START_TEST(call_between_look_and_poll_still_wakes)
{
    loop_t *loop = new_loop(_i);
    ck_assert_ptr_nonnull(loop_call_later(loop, 1.0, stop_cb, NULL));
    loop_set_wait_hook(loop, call_in_the_window, NULL);
    hooked = 0;
    woke_at = 0;
    double t0 = now();
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(woke_at > 0 && woke_at - t0 < 0.5,
                  "the call made just before the poll was not seen for %.3f s", woke_at - t0);
    finish(loop);
}
END_TEST

/* ---- the window, from its first instant ------------------------------ */

/* The wait hook above runs some way after the look: a loop that raised
 * `polling` after its look, but before calling the wait hook, passes that
 * test.  The look hook (loop.h: for tests only) runs on the loop's thread
 * just after the look itself, before anything else of the tick.  Its
 * first call is the look of the first tick: the deque is empty, the loop
 * means to sleep until the watchdog timer.  Another thread makes a call
 * right there and is joined; the loop must not sleep through it.  On a
 * coalescing loop that raised `polling` too late, the sender sees the flag
 * down and does not write, and the loop sleeps until the watchdog. */

static int looks;

static void call_right_after_the_look(loop_t *loop, size_t queued, void *ctx)
{
    (void)ctx;
    if (looks++ == 0) {
        ck_assert_uint_eq(queued, 0); /* nothing to run: the loop means to sleep */
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, call_once, loop), 0);
        ck_assert_int_eq(pthread_join(th, NULL), 0);
    }
}

START_TEST(call_right_after_the_look_still_wakes)
{
    loop_t *loop = new_loop(_i);
    arm_watchdog(loop, WATCHDOG);
    loop_set_look_hook(loop, call_right_after_the_look, NULL);
    looks = 0;
    woke_at = 0;
    double t0 = now();
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_ge(looks, 1);
    ck_assert_msg(woke_at > 0 && !watchdog_fired,
                  "%s: a call made right after the look at the ready deque was not "
                  "seen until the %.0f s watchdog (%.3f s): `polling` raised after the look?",
                  modes[_i].name, WATCHDOG, now() - t0);
    printf("look hook (%s): woken %.3f ms after the start\n", modes[_i].name,
           (woke_at - t0) * 1e3);
    finish(loop);
}
END_TEST

/* ---- push, then write ------------------------------------------------- */

/* loop_call_soon_threadsafe() must queue the handle BEFORE it writes to the
 * self-pipe.  Written first, the byte can wake the loop, which drains the
 * pipe, looks at the deque -- still empty -- and sleeps again; the push
 * lands after the look, and nothing wakes the loop for it.  A stress run
 * meets that window by luck; this test holds the sender in it.
 *
 * The wrapper below replaces write() for the whole program (a definition
 * in the program wins over the C library's, for libloop.a too), and calls
 * the real one (the next definition: the C library's, or a sanitizer's
 * interceptor).  In the sender thread, once armed, it returns from its
 * first write only when the loop has run the call, or has called its wait
 * hook again: it has woken, run the pipe's reader, looked at the deque and
 * decided how long to sleep.  If the handle was pushed before the write,
 * the loop ran it, and stops; if not, the push comes after that look and
 * the loop sleeps until the watchdog.  Deterministic with every wake-up:
 * the loop is asleep (so `polling` is up, and no byte is pending) when the
 * sender calls, since it calls only after the first wait hook. */
typedef ssize_t (*write_fn)(int, const void *, size_t);
static write_fn real_write;

/* Found before main() runs, so before any thread starts: every thread then
 * reads a value that thread creation published.  (pthread_once would do as
 * well, but helgrind does not model it and reports the first read in a
 * sender thread as a race, now and then.) */
__attribute__((constructor)) static void find_real_write(void)
{
    /* The object-to-function pointer conversion POSIX dlsym() requires. */
    *(void **)&real_write = dlsym(RTLD_NEXT, "write");
}

static _Thread_local bool stall_after_write; /* armed in the sender only */
static pthread_mutex_t waits_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t waits_changed = PTHREAD_COND_INITIALIZER;
static int waits;      /* wait hook calls so far (under waits_lock) */
static bool called;    /* the sender's callback ran (under waits_lock) */
static bool held;      /* the sender's write was held, and released in time */

/* Wait (at most `at_most` seconds) until the loop has called its wait hook
 * n times, or has run the sender's callback; false on a timeout. */
static bool wait_for_loop(int n, double at_most)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* the condition variable's clock */
    until.tv_sec += (time_t)at_most;
    pthread_mutex_lock(&waits_lock);
    int rc = 0;
    while (waits < n && !called && rc == 0)
        rc = pthread_cond_timedwait(&waits_changed, &waits_lock, &until);
    bool ok = waits >= n || called;
    pthread_mutex_unlock(&waits_lock);
    return ok;
}

ssize_t write(int fd, const void *buf, size_t size)
{
    if (real_write == NULL) /* a write before the constructors ran */
        find_real_write();
    ssize_t rc = real_write(fd, buf, size);
    if (stall_after_write) {
        int saved = errno;
        stall_after_write = false;
        held = wait_for_loop(2, 2 * WATCHDOG); /* ran the call, or looked again */
        errno = saved;
    }
    return rc;
}

static double count_waits(loop_t *loop, double timeout, void *ctx)
{
    (void)loop;
    (void)ctx;
    pthread_mutex_lock(&waits_lock);
    waits++;
    pthread_cond_broadcast(&waits_changed);
    pthread_mutex_unlock(&waits_lock);
    return timeout;
}

static void note_wake_and_signal(loop_t *loop, void *arg)
{
    note_wake(loop, arg);
    pthread_mutex_lock(&waits_lock);
    called = true;
    pthread_cond_broadcast(&waits_changed);
    pthread_mutex_unlock(&waits_lock);
}

static void *send_with_stalled_write(void *arg)
{
    ck_assert(wait_for_loop(1, 2 * WATCHDOG)); /* the loop has looked, and sleeps */
    stall_after_write = true;
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(arg, note_wake_and_signal, NULL));
    stall_after_write = false;
    return NULL;
}

START_TEST(push_lands_before_the_wakeup_byte)
{
    loop_t *loop = new_loop(_i);
    arm_watchdog(loop, WATCHDOG);
    loop_set_wait_hook(loop, count_waits, NULL);
    waits = 0;
    called = held = false;
    woke_at = 0;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, send_with_stalled_write, loop), 0);
    double t0 = now();
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_msg(held, "%s: the sender's write was held %.0f s: the loop neither ran the call "
                  "nor looked at the deque again (a system call made with ready_lock held?)",
                  modes[_i].name, 2 * WATCHDOG);
    ck_assert_msg(woke_at > 0 && !watchdog_fired,
                  "%s: the loop woke, drained the self-pipe and slept again before the "
                  "handle was pushed; the call was seen %.3f s later, by the %.0f s watchdog: "
                  "write before push?",
                  modes[_i].name, now() - t0, WATCHDOG);
    ck_assert_uint_ge(loop_wakeup_writes(loop), 1);
    finish(loop);
}
END_TEST

/* ---- from the loop's own thread --------------------------------------- */

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    label_add_at(arg, ticks); /* "name@tick" */
}

static void queues_more(loop_t *loop, void *arg)
{
    note(loop, arg);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, note, "c"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "d"));
}

START_TEST(loop_thread_calls_are_fifo_with_call_soon)
{
    loop_t *loop = virtual_loop(); /* its wait hook counts the ticks */
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, queues_more, "a"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "b"));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    /* The self-pipe's reader runs in ticks 1 and 2 too, and prints nothing:
     * the ticks are those of call_soon. */
    ck_assert_str_eq(ran, "a@1 b@1 c@2 d@2");
    ck_assert_int_eq(ticks, 3); /* the third wait finds nothing: stop */
    finish(loop);
}
END_TEST

/* ---- cancel from another thread --------------------------------------- */

/* Handles are not thread-safe: another thread cancels one by sending a
 * callback that cancels it on the loop's thread.  The loop's thread
 * retained the handle before passing it over, so the pointer is valid
 * whenever that callback runs, even after the timer would have fired. */
static int fired;

static void fire(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    fired++;
}

static void cancel_and_release(loop_t *loop, void *arg)
{
    (void)loop;
    handle_cancel(arg);
    handle_release(arg);
}

static void *cancel_from_worker(void *arg)
{
    handle_t **handles = arg; /* [0]: due in 0.2 s, [1]: already ran */
    sleep_ms(50);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(handle_loop, cancel_and_release, handles[0]));
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(handle_loop, cancel_and_release, handles[1]));
    return NULL;
}

START_TEST(cancel_from_another_thread)
{
    loop_t *loop = new_loop(_i);
    handle_loop = loop;
    fired = 0;
    handle_t *handles[2];
    handles[0] = loop_call_later(loop, 0.2, fire, NULL);
    handles[1] = loop_call_soon(loop, fire, NULL);
    handle_retain(handles[0]); /* kept for the worker, on the loop's thread */
    handle_retain(handles[1]);
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.4, stop_cb, NULL));
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, cancel_from_worker, handles), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_int_eq(fired, 1); /* the call_soon ran; the timer was cancelled */
    finish(loop);
}
END_TEST

/* ---- refusals --------------------------------------------------------- */

START_TEST(refusals)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    errno = 0;
    ck_assert_ptr_null(loop_call_soon_threadsafe(loop, NULL, NULL));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), ""); /* errno only: see loop.h */
    ck_assert_int_eq(loop_close(loop), 0);
    errno = 0;
    ck_assert_ptr_null(loop_call_soon_threadsafe(loop, note, "x"));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(loop_set_wakeup(loop, LOOP_WAKEUP_PIPE, 0), -1);
    loop_free(loop);

    loop = loop_new();
    ck_assert_int_eq(loop_set_wakeup(loop, (loop_wakeup)42, 0), -1);
    ck_assert_int_eq(errno, EINVAL);
    finish(loop);
}
END_TEST

/* ---- what a wake-up costs --------------------------------------------- */
/* Two rules that no lost call would reveal, only wasted work: the reader
 * of the self-pipe empties it in one go, and coalescing writes one byte per
 * sleep, not one per call.  make mutate's 06-read-once and 06-coalesce-load
 * break them. */

static int ticks;

static double count_ticks(loop_t *loop, double timeout, void *ctx)
{
    (void)loop;
    (void)ctx;
    ticks++;
    return timeout; /* only counting: the loop waits as it would */
}

START_TEST(a_full_pipe_is_emptied_in_one_tick)
{
    loop_t *loop = new_loop(0); /* the pipe, one byte a call */
    seen = 0;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, overfill, loop), 0); /* 64 KiB in the pipe */
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0); /* one tick runs them all */
    ck_assert_int_eq(seen, OVERFILL);
    /* Emptied: now the loop sleeps until its timer, in one tick.  A byte
     * left in the pipe would wake it at once, tick after tick. */
    ticks = 0;
    loop_set_wait_hook(loop, count_ticks, NULL);
    arm_watchdog(loop, 0.2);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(ticks <= 2, "%d ticks to sleep 0.2 s after a full pipe: the pipe was "
                  "not emptied, and each tick read only part of it", ticks);
    finish(loop);
}
END_TEST

#define BURST 100
static unsigned long burst_writes;
static long burst_seen;

static void count_burst(loop_t *loop, void *arg)
{
    (void)arg;
    if (++burst_seen == BURST)
        loop_stop(loop);
}

/* In the poll step (where the hook runs, after the look at the ready deque),
 * BURST calls: the loop may be asleep, so the first must write; the others
 * find a byte on its way already. */
static double burst_in_the_poll(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (burst_seen == 0 && burst_writes == 0) {
        unsigned long before = loop_wakeup_writes(loop);
        for (int i = 0; i < BURST; i++)
            ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, count_burst, NULL));
        burst_writes = loop_wakeup_writes(loop) - before;
    }
    return timeout;
}

START_TEST(coalescing_writes_one_byte_a_sleep)
{
    loop_t *loop = new_loop(2 + _i); /* coalesced pipe, coalesced eventfd */
    burst_writes = 0;
    burst_seen = 0;
    ck_assert_ptr_nonnull(loop_call_later(loop, 86400, never, NULL));
    arm_watchdog(loop, FAR_WATCHDOG);
    loop_set_wait_hook(loop, burst_in_the_poll, NULL);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_no_watchdog(modes[2 + _i].name);
    ck_assert_int_eq(burst_seen, BURST);
    ck_assert_msg(burst_writes == 1, "%s: %d calls while the loop polled wrote %lu bytes, "
                  "not 1", modes[2 + _i].name, BURST, burst_writes);
    finish(loop);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("threadsafe");
    TCase *tc = tcase_create("threadsafe");
    tcase_set_timeout(tc, 60);
    int n = (int)(sizeof modes / sizeof modes[0]);
    tcase_add_loop_test(tc, stress_none_lost_none_twice_order_kept, 0, n);
    tcase_add_loop_test(tc, asleep_on_one_day_timer_wakes_within_ms, 0, n);
    tcase_add_test(tc, full_pipe_loses_nothing);
    tcase_add_loop_test(tc, stop_from_another_thread, 0, n);
    tcase_add_loop_test(tc, call_between_look_and_poll_still_wakes, 0, n);
    tcase_add_loop_test(tc, call_right_after_the_look_still_wakes, 0, n);
    tcase_add_loop_test(tc, push_lands_before_the_wakeup_byte, 0, n);
    tcase_add_test(tc, loop_thread_calls_are_fifo_with_call_soon);
    tcase_add_loop_test(tc, cancel_from_another_thread, 0, n);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, a_full_pipe_is_emptied_in_one_tick);
    tcase_add_loop_test(tc, coalescing_writes_one_byte_a_sleep, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
