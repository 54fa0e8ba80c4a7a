/* Exercise 3 (chapter 11): coalesced wake-ups.
 *
 * asyncio writes a byte to the self-pipe for every call_soon_threadsafe():
 * a system call per post, and as many reads and wake-ups.  A byte is needed
 * only when the loop may be asleep in its poll and no byte is on its way.
 * Write that test in write_to_self() (loop.c), and the line of
 * read_from_self() that lets the next post write again.  What the tests
 * check, with loop_wakeup_writes() (the loop's count of write() calls on
 * its self-pipe):
 *   - 1,000 posts made while the loop sleeps in its poll cost one byte
 *     (a few at most), and every post runs, in order;
 *   - posts made while the loop runs a callback cost no byte at all: the
 *     loop will look at its inbox before it sleeps again;
 *   - no wake-up is lost: 300 times, a post made after the loop has run
 *     the previous one and gone back to sleep (or is about to) runs;
 *   - the loop's own thread still writes a byte per call, as asyncio
 *     does (those bytes are ticks CPython makes too), and so does any
 *     thread while the loop is not running (the byte waits in the pipe,
 *     and the first tick of the next run reads it, as CPython's does), unless
 *     loop_set_wakeup(.., 1) asked to coalesce every thread; and
 *     loop_set_wakeup(.., 0) is asyncio's byte per call from every thread.
 * No timing is asserted: the loop is held in its poll by a wait hook, or
 * in a callback by a gate, while the posts are made.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"

/* How long a test waits for what an answer does at once: 2 s, stretched as
 * Check's own timeout is under valgrind and the sanitizers. */
static double wait_limit(void)
{
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    double k = m != NULL ? atof(m) : 1.0;
    return 2.0 * (k >= 1.0 ? k : 1.0);
}

static void pause_us(long us)
{
    nanosleep(&(struct timespec){.tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000}, NULL);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Wait until *n >= want, at most wait_limit() seconds; 1 if it came. */
static int wait_for(atomic_int *n, int want)
{
    double deadline = now() + wait_limit();
    while (atomic_load(n) < want && now() < deadline)
        pause_us(50);
    return atomic_load(n) >= want;
}

static void wait_count(atomic_int *n, int want, const char *what)
{
    ck_assert_msg(wait_for(n, want), "%s (%d of %d ran)", what, atomic_load(n), want);
}

/* ------------------------------------------------------ what the posts do */
static atomic_int ran;      /* posts run */
static atomic_int disorder; /* posts run out of their order */

static void in_order(loop_t *loop, void *arg)
{
    (void)loop;
    if ((intptr_t)arg != atomic_load(&ran))
        atomic_fetch_add(&disorder, 1);
    atomic_fetch_add(&ran, 1);
}

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* ------------------------------------------------- a loop in its thread */
static loop_t *loop;
static pthread_t loop_thread;

/* The wait hook holds the loop in its poll (after its look at the ready
 * deque: it is asleep, as far as any poster can tell) while `hold` is set. */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int hold, held;

static double hold_in_poll(loop_t *l, double timeout, void *ctx)
{
    (void)l;
    (void)ctx;
    pthread_mutex_lock(&hold_lock);
    if (hold) {
        held = 1;
        pthread_cond_broadcast(&hold_cond);
        while (hold)
            pthread_cond_wait(&hold_cond, &hold_lock);
        held = 0;
    }
    pthread_mutex_unlock(&hold_lock);
    return timeout;
}

/* The gate holds it in a callback. */
static int gate_closed, gate_entered;

static void gate(loop_t *l, void *arg)
{
    (void)l;
    (void)arg;
    pthread_mutex_lock(&hold_lock);
    gate_entered = 1;
    pthread_cond_broadcast(&hold_cond);
    while (gate_closed)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
}

static atomic_int loop_done;

static void *run_loop(void *arg)
{
    (void)arg;
    loop_run_forever(loop);
    atomic_store(&loop_done, 1);
    return NULL;
}

/* A loop in a thread of its own, held in its first poll. */
static void start_loop_held(void)
{
    atomic_store(&ran, 0);
    atomic_store(&disorder, 0);
    loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    loop_set_wait_hook(loop, hold_in_poll, NULL);
    hold = 1;
    held = 0;
    atomic_store(&loop_done, 0);
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, run_loop, NULL), 0);
    pthread_mutex_lock(&hold_lock);
    while (!held)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
}

static void release_poll(void)
{
    pthread_mutex_lock(&hold_lock);
    hold = 0;
    pthread_cond_broadcast(&hold_cond);
    pthread_mutex_unlock(&hold_lock);
}

static void stop_loop(void)
{
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, stop, NULL));
    ck_assert_msg(wait_for(&loop_done, 1),
                  "the loop slept through the post of its stop (a lost wake-up: is "
                  "wakeup_pending ever cleared?)");
    ck_assert_int_eq(pthread_join(loop_thread, NULL), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    loop = NULL;
}

static void post_many(int n)
{
    for (intptr_t i = 0; i < n; i++)
        ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, in_order, (void *)i));
}

/* -------------------------------------------------------------- tests */
START_TEST(a_thousand_posts_to_a_sleeping_loop_write_one_byte)
{
    start_loop_held();
    unsigned long before = loop_wakeup_writes(loop);
    post_many(1000);
    unsigned long writes = loop_wakeup_writes(loop) - before;
    release_poll();
    wait_count(&ran, 1000, "the posts did not all run");
    ck_assert_msg(writes <= 3,
                  "%lu writes to the self-pipe for 1,000 posts made while the loop slept "
                  "in its poll: after the first, a byte is on its way (wakeup_pending), "
                  "and one more wakes nobody",
                  writes);
    ck_assert_msg(atomic_load(&disorder) == 0, "%d posts ran out of order",
                  atomic_load(&disorder));
    stop_loop();
}
END_TEST

/* arm runs in the tick that reads the byte of its own post; the gate it
 * queues runs in the next tick, when no byte is on its way. */
static void arm(loop_t *l, void *arg)
{
    (void)arg;
    ck_assert_ptr_nonnull(loop_call_soon(l, gate, NULL));
}

START_TEST(posts_while_the_loop_runs_a_callback_write_nothing)
{
    start_loop_held();
    gate_closed = 1;
    gate_entered = 0;
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, arm, NULL));
    release_poll();
    pthread_mutex_lock(&hold_lock);
    while (!gate_entered)
        pthread_cond_wait(&hold_cond, &hold_lock);
    hold = 1; /* the next poll holds the loop again */
    pthread_mutex_unlock(&hold_lock);
    unsigned long before = loop_wakeup_writes(loop);
    post_many(100);
    unsigned long writes = loop_wakeup_writes(loop) - before;
    pthread_mutex_lock(&hold_lock);
    gate_closed = 0;
    pthread_cond_broadcast(&hold_cond);
    while (!held)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
    ck_assert_msg(writes == 0,
                  "%lu writes to the self-pipe for 100 posts made while the loop ran a "
                  "callback: it is not asleep (loop->polling is false), and it looks at "
                  "its inbox before it sleeps again",
                  writes);
    /* Now it is in its poll, and no byte is on its way: the next post must
     * write one -- unless one of the 100 left wakeup_pending set, with no
     * byte behind it. */
    before = loop_wakeup_writes(loop);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, in_order, (void *)(intptr_t)100));
    writes = loop_wakeup_writes(loop) - before;
    release_poll();
    wait_count(&ran, 101, "the posts did not all run");
    ck_assert_msg(writes == 1,
                  "%lu writes for a post made while the loop slept in its poll with no byte "
                  "on its way: without one it would sleep through the post (did the posts "
                  "made while it ran a callback leave wakeup_pending set?)",
                  writes);
    ck_assert_int_eq(atomic_load(&disorder), 0);
    stop_loop();
}
END_TEST

START_TEST(a_post_after_the_loop_went_back_to_sleep_still_wakes_it)
{
    start_loop_held();
    release_poll();
    unsigned seed = (unsigned)time(NULL);
    for (int i = 0; i < 300; i++) {
        /* Sometimes at once (the loop is still in the tick that ran the
         * last post, or between its look and its poll), sometimes after
         * it had time to fall asleep. */
        seed = seed * 1103515245u + 12345u;
        unsigned r = (seed >> 16) % 4;
        if (r > 0)
            pause_us(r == 1 ? 10 : r == 2 ? 100 : 1000);
        ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, in_order, (void *)(intptr_t)i));
        ck_assert_msg(wait_for(&ran, i + 1),
                      "post %d never ran: the loop slept through it (a lost wake-up: is "
                      "wakeup_pending ever cleared?)",
                      i);
    }
    ck_assert_int_eq(atomic_load(&disorder), 0);
    stop_loop();
}
END_TEST

/* The loop's own thread: a callback posts 3 times. */
static unsigned long own_writes;

static void post_three(loop_t *l, void *arg)
{
    (void)arg;
    unsigned long before = loop_wakeup_writes(l);
    for (intptr_t i = 0; i < 3; i++)
        ck_assert_ptr_nonnull(loop_call_soon_threadsafe(l, in_order, (void *)i));
    own_writes = loop_wakeup_writes(l) - before;
    ck_assert_ptr_nonnull(loop_call_soon(l, stop, NULL));
}

static unsigned long own_thread_writes(int mode)
{
    atomic_store(&ran, 0);
    atomic_store(&disorder, 0);
    loop_t *l = loop_new();
    ck_assert_ptr_nonnull(l);
    if (mode >= 0)
        ck_assert_int_eq(loop_set_wakeup(l, LOOP_WAKEUP_PIPE, mode), 0);
    ck_assert_ptr_nonnull(loop_call_soon(l, post_three, NULL));
    ck_assert_int_eq(loop_run_forever(l), 0);
    if (atomic_load(&ran) < 3) /* the posts came behind the stop */
        ck_assert_int_eq(loop_run_forever(l), 0);
    ck_assert_int_eq(atomic_load(&ran), 3);
    ck_assert_int_eq(loop_close(l), 0);
    loop_free(l);
    return own_writes;
}

START_TEST(the_loops_own_thread_writes_asyncios_byte)
{
    /* A new loop coalesces the posts of other threads only. */
    unsigned long n = own_thread_writes(-1);
    ck_assert_msg(n == 3,
                  "%lu writes for 3 call_soon_threadsafe of the loop's own thread: asyncio "
                  "writes a byte each time, and the traces compare its ticks with ours; "
                  "only other threads' writes are coalesced (COALESCE_OTHER_THREADS)",
                  n);
    n = own_thread_writes(0);
    ck_assert_msg(n == 3, "loop_set_wakeup(PIPE, 0): %lu writes for 3 posts, not 3", n);
    n = own_thread_writes(1);
    ck_assert_msg(n == 0,
                  "loop_set_wakeup(PIPE, 1) coalesces every thread's: %lu writes for 3 "
                  "posts made while the loop ran a callback, not 0",
                  n);
}
END_TEST

/* Another thread posts to a loop that is not running. */
static void *post_three_from_thread(void *arg)
{
    for (intptr_t i = 0; i < 3; i++)
        if (loop_call_soon_threadsafe(arg, in_order, (void *)i) == NULL)
            return "refused";
    return NULL;
}

START_TEST(a_loop_not_running_gets_every_byte)
{
    atomic_store(&ran, 0);
    atomic_store(&disorder, 0);
    loop_t *l = loop_new();
    ck_assert_ptr_nonnull(l);
    unsigned long before = loop_wakeup_writes(l);
    pthread_t t;
    void *why = NULL;
    ck_assert_int_eq(pthread_create(&t, NULL, post_three_from_thread, l), 0);
    ck_assert_int_eq(pthread_join(t, &why), 0);
    ck_assert_ptr_null(why);
    unsigned long writes = loop_wakeup_writes(l) - before;
    ck_assert_msg(writes == 3,
                  "%lu writes for 3 posts from another thread to a loop that is not "
                  "running: CPython's bytes wait in the pipe, and the first run spends a "
                  "tick reading them, which the traces count; coalesce only while the "
                  "loop runs (thread_id is not NULL)",
                  writes);
    ck_assert_ptr_nonnull(loop_call_soon(l, stop, NULL));
    ck_assert_int_eq(loop_run_forever(l), 0);
    ck_assert_int_eq(atomic_load(&ran), 3);
    ck_assert_int_eq(loop_close(l), 0);
    loop_free(l);
}
END_TEST

START_TEST(no_coalescing_is_a_byte_per_post)
{
    atomic_store(&ran, 0);
    atomic_store(&disorder, 0);
    loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_int_eq(loop_set_wakeup(loop, LOOP_WAKEUP_PIPE, 0), 0);
    loop_set_wait_hook(loop, hold_in_poll, NULL);
    hold = 1;
    held = 0;
    atomic_store(&loop_done, 0);
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, run_loop, NULL), 0);
    pthread_mutex_lock(&hold_lock);
    while (!held)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
    unsigned long before = loop_wakeup_writes(loop);
    post_many(10);
    unsigned long writes = loop_wakeup_writes(loop) - before;
    release_poll();
    wait_count(&ran, 10, "the posts did not all run");
    ck_assert_msg(writes == 10,
                  "loop_set_wakeup(PIPE, 0) is asyncio's byte per call: %lu writes for 10 "
                  "posts",
                  writes);
    stop_loop();
}
END_TEST

static Suite *wakeup_suite(void)
{
    Suite *s = suite_create("exercise 3: coalesced wake-ups");
    TCase *tc = tcase_create("wakeup");
    tcase_add_test(tc, a_thousand_posts_to_a_sleeping_loop_write_one_byte);
    tcase_add_test(tc, posts_while_the_loop_runs_a_callback_write_nothing);
    tcase_add_test(tc, a_post_after_the_loop_went_back_to_sleep_still_wakes_it);
    tcase_add_test(tc, the_loops_own_thread_writes_asyncios_byte);
    tcase_add_test(tc, a_loop_not_running_gets_every_byte);
    tcase_add_test(tc, no_coalescing_is_a_byte_per_post);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(wakeup_suite());
}
