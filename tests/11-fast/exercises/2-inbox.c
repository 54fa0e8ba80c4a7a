/* Exercise 2 (chapter 11): the ready deque without a lock.
 *
 * Other threads post to the loop's inbox, under inbox_lock; the ready deque
 * is the loop thread's alone.  Write take_inbox() in loop.c, which moves
 * the inbox to the back of `ready`, and call it where the loop's thread
 * must, so that the order stays the one CPython's single deque gives.
 * What the tests check (the first three are CPython's order, asserted on
 * CPython 3.11 by 2-inbox.py):
 *   - a post made before a call_soon of the loop's thread (the posting
 *     thread was joined first: it happened before) runs before it, whether
 *     `ready` was empty or not;
 *   - a post made while a tick runs its callbacks runs in the next tick,
 *     and one made before the tick's snapshot (here: during the poll) runs
 *     in this one: asyncio's ntodo;
 *   - a post made while the loop runs callbacks (no byte is written: the
 *     loop is not asleep) still runs: the loop looks at the inbox before
 *     it sleeps;
 *   - 4 threads posting 5,000 calls each while the loop's thread queues its
 *     own: every post runs, once, each thread's in its order;
 *   - out of memory while moving: the call_soon that asked is refused, and
 *     every post still runs, once, in order;
 *   - the loop's thread takes no lock at all while no other thread posts
 *     (the program counts pthread_mutex_lock calls: counting.h).
 */
#define _GNU_SOURCE 1
#include "counting.h"

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

static void pause_ms(int ms)
{
    nanosleep(&(struct timespec){.tv_nsec = ms * 1000L * 1000L}, NULL);
}

/* ----------------------------------------------------- the log of calls */
/* Every callback appends its name and the tick it ran in. */
enum { LOG_MAX = 64 };
static char log_text[LOG_MAX * 16];
static int tick; /* counted by the wait hook, once per tick */

static void say(const char *name)
{
    char item[32];
    snprintf(item, sizeof item, "%s%s@%d", log_text[0] ? " " : "", name, tick);
    strncat(log_text, item, sizeof log_text - strlen(log_text) - 1);
}

static double count_ticks(loop_t *loop, double timeout, void *ctx);

static loop_t *new_loop(void)
{
    log_text[0] = '\0';
    tick = 0;
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    loop_set_wait_hook(loop, count_ticks, NULL);
    return loop;
}

static void end_loop(loop_t *loop)
{
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

static void named(loop_t *loop, void *arg)
{
    (void)loop;
    say(arg);
}

/* ------------------------------------ a post from another thread, joined */
typedef struct post {
    loop_t *loop;
    loop_callback callback;
    void *arg;
    int ok;
} post_t;

static void *post_body(void *arg)
{
    post_t *p = arg;
    p->ok = loop_call_soon_threadsafe(p->loop, p->callback, p->arg) != NULL;
    return NULL;
}

/* Another thread posts callback(arg), and is joined: the post happened
 * before whatever this thread does next. */
static void post_from_thread(loop_t *loop, loop_callback callback, void *arg)
{
    post_t p = {loop, callback, arg, 0};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, post_body, &p), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_msg(p.ok, "call_soon_threadsafe refused: %s", strerror(errno));
}

/* The wait hook of every loop here: count the tick, wait as asked (the
 * selector waits; a real clock) -- and, when armed, have another thread
 * post before the poll. */
static const char *post_in_poll;

static double count_ticks(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    tick++;
    if (post_in_poll != NULL) {
        const char *name = post_in_poll;
        post_in_poll = NULL;
        post_from_thread(loop, named, (void *)name);
    }
    return timeout;
}

/* -------------------------------------------------------------- tests */
static void a_(loop_t *loop, void *arg);
static void r_(loop_t *loop, void *arg);

/* Tick 1 runs A and B; A: a post P1, a call_soon Q1, posts P2, P3, a
 * call_soon Q2 (`ready` holds B meanwhile: the posts are appended behind
 * it).  B queues R.  R is the last callback of its tick (`ready` is
 * empty): a post P4, then a call_soon Q3, which stops. */
static void a_(loop_t *loop, void *arg)
{
    (void)arg;
    say("A");
    post_from_thread(loop, named, "P1");
    ck_assert_ptr_nonnull(loop_call_soon(loop, named, "Q1"));
    post_from_thread(loop, named, "P2");
    post_from_thread(loop, named, "P3");
    ck_assert_ptr_nonnull(loop_call_soon(loop, named, "Q2"));
}

static void b_(loop_t *loop, void *arg)
{
    (void)arg;
    say("B");
    ck_assert_ptr_nonnull(loop_call_soon(loop, r_, NULL));
}

static void q3_(loop_t *loop, void *arg)
{
    (void)arg;
    say("Q3");
    loop_stop(loop);
}

static void r_(loop_t *loop, void *arg)
{
    (void)arg;
    say("R");
    post_from_thread(loop, named, "P4");
    ck_assert_ptr_nonnull(loop_call_soon(loop, q3_, NULL));
}

START_TEST(a_post_before_a_call_soon_runs_before_it)
{
    loop_t *loop = new_loop();
    ck_assert_ptr_nonnull(loop_call_soon(loop, a_, NULL));
    ck_assert_ptr_nonnull(loop_call_soon(loop, b_, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    /* CPython: call_soon_threadsafe appends to _ready at once. */
    ck_assert_str_eq(log_text, "A@1 B@1 P1@2 Q1@2 P2@2 P3@2 Q2@2 R@2 P4@3 Q3@3");
    end_loop(loop);
}
END_TEST

/* Tick 1: S is queued; during the poll another thread posts P (before the
 * snapshot: it runs in tick 1).  S runs, and has another thread post T
 * (after the snapshot: tick 2), then queues U, behind T. */
static void s_(loop_t *loop, void *arg)
{
    (void)arg;
    say("S");
    post_from_thread(loop, named, "T");
    ck_assert_ptr_nonnull(loop_call_soon(loop, named, "U"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, stop, NULL));
}

START_TEST(a_post_before_the_snapshot_runs_in_this_tick_one_after_in_the_next)
{
    loop_t *loop = new_loop();
    ck_assert_ptr_nonnull(loop_call_soon(loop, s_, NULL));
    post_in_poll = "P";
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(log_text, "S@1 P@1 T@2 U@2");
    end_loop(loop);
}
END_TEST

/* ------------------------------------------------- a loop in its thread */
static loop_t *tloop;
static pthread_t loop_thread;

static void *run_loop(void *arg)
{
    (void)arg;
    loop_run_forever(tloop);
    return NULL;
}

static void wait_flag(atomic_int *flag, int want, const char *what)
{
    for (int i = 0; i < (int)(wait_limit() * 200) && atomic_load(flag) < want; i++)
        pause_ms(5);
    ck_assert_msg(atomic_load(flag) >= want, "%s (%d of %d)", what, atomic_load(flag), want);
}

static void start_loop(void)
{
    tloop = loop_new();
    ck_assert_ptr_nonnull(tloop);
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, run_loop, NULL), 0);
}

/* Stop it from here (once the test saw its posts run: the stop is a post
 * too). */
static void stop_loop(void)
{
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(tloop, stop, NULL));
    ck_assert_int_eq(pthread_join(loop_thread, NULL), 0);
    end_loop(tloop);
    tloop = NULL;
}

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open, gate_entered;

static void gate(loop_t *l, void *arg)
{
    (void)l;
    (void)arg;
    pthread_mutex_lock(&gate_lock);
    gate_entered = 1;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

static atomic_int ran;

static void count_run(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

/* The safety net of the tests with a loop in a thread: a starter that
 * never moves the inbox never runs the stop either. */
static void stop_after(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

START_TEST(a_post_made_while_the_loop_runs_callbacks_still_runs)
{
    tloop = loop_new();
    ck_assert_ptr_nonnull(tloop);
    atomic_store(&ran, 0);
    gate_open = gate_entered = 0;
    ck_assert_ptr_nonnull(loop_call_soon(tloop, gate, NULL));
    ck_assert_ptr_nonnull(loop_call_later(tloop, 2 * wait_limit(), stop_after, NULL));
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, run_loop, NULL), 0);
    pthread_mutex_lock(&gate_lock);
    while (!gate_entered)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    /* The loop runs a callback: no byte is written for this post (the
     * loop is not asleep; it will look at its inbox before it sleeps). */
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(tloop, count_run, NULL));
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    wait_flag(&ran, 1,
              "a post made while the loop ran a callback never ran: the loop went to "
              "sleep with it in the inbox (the look before the poll must take the inbox)");
    stop_loop();
}
END_TEST

/* 4 threads, 5,000 posts each; the loop's own thread queues its own
 * callbacks meanwhile (a chain), so that posts are moved both into an
 * empty `ready` and behind what it holds. */
enum { THREADS = 4, POSTS = 5000 };
static atomic_int seen[THREADS];
static atomic_int disorder;

static void posted(loop_t *loop, void *arg)
{
    (void)loop;
    intptr_t v = (intptr_t)arg;
    int t = (int)(v / POSTS), i = (int)(v % POSTS);
    if (atomic_load(&seen[t]) != i)
        atomic_fetch_add(&disorder, 1);
    atomic_store(&seen[t], i + 1);
    atomic_fetch_add(&ran, 1);
}

static void chain(loop_t *loop, void *arg)
{
    (void)arg;
    if (atomic_load(&ran) < THREADS * POSTS)
        loop_call_soon(loop, chain, NULL);
}

static void *poster(void *arg)
{
    intptr_t t = (intptr_t)arg;
    for (int i = 0; i < POSTS; i++) {
        if (loop_call_soon_threadsafe(tloop, posted, (void *)(t * POSTS + i)) == NULL)
            return "refused";
        if (i % 500 == 0)
            pause_ms(1);
    }
    return NULL;
}

START_TEST(four_threads_posts_all_run_once_in_order)
{
    atomic_store(&ran, 0);
    atomic_store(&disorder, 0);
    for (int t = 0; t < THREADS; t++)
        atomic_store(&seen[t], 0);
    start_loop();
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(tloop, chain, NULL));
    pthread_t th[THREADS];
    for (intptr_t t = 0; t < THREADS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, poster, (void *)t), 0);
    for (int t = 0; t < THREADS; t++) {
        void *why = NULL;
        ck_assert_int_eq(pthread_join(th[t], &why), 0);
        ck_assert_msg(why == NULL, "thread %d: a post was %s", t, (const char *)why);
    }
    wait_flag(&ran, THREADS * POSTS, "not every post ran");
    stop_loop();
    ck_assert_int_eq(atomic_load(&ran), THREADS * POSTS);
    ck_assert_msg(atomic_load(&disorder) == 0,
                  "%d posts ran out of their thread's order", atomic_load(&disorder));
}
END_TEST

/* Out of memory while moving.  Tick 1 runs M and N; M (`ready` holds N)
 * has 5,000 posts made, then calls call_soon with every malloc failing:
 * the move cannot grow `ready`.  The call_soon is refused; N queues O. */
enum { MANY = 5000 };
static long order_next, order_bad;
static int refused_ran, o_ran, refused_errno;
static handle_t *refused_handle;

static void in_order(loop_t *loop, void *arg)
{
    (void)loop;
    if ((intptr_t)arg != order_next)
        order_bad++;
    order_next++;
}

static void must_not_run(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    refused_ran = 1;
}

static void *post_many(void *arg)
{
    for (intptr_t i = 0; i < MANY; i++)
        if (loop_call_soon_threadsafe(arg, in_order, (void *)i) == NULL)
            return "refused";
    return NULL;
}

static void m_(loop_t *loop, void *arg)
{
    (void)arg;
    pthread_t t;
    void *why = NULL;
    ck_assert_int_eq(pthread_create(&t, NULL, post_many, loop), 0);
    ck_assert_int_eq(pthread_join(t, &why), 0);
    ck_assert_ptr_null(why);
    counting_fail(1);
    refused_handle = loop_call_soon(loop, must_not_run, NULL);
    refused_errno = errno;
    counting_fail(0);
}

static void o_(loop_t *loop, void *arg)
{
    (void)arg;
    o_ran = 1;
    loop_stop(loop);
}

static void n_(loop_t *loop, void *arg)
{
    (void)arg;
    ck_assert_ptr_nonnull(loop_call_soon(loop, o_, NULL));
}

START_TEST(out_of_memory_while_moving_loses_no_post)
{
    if (!counting_mallocs()) {
        puts("skipped: valgrind or a sanitizer brings its own malloc, which this test cannot make fail");
        return;
    }
    loop_t *loop = new_loop();
    for (int i = 0; i < 64; i++) /* the pool has free handles: only the move mallocs */
        ck_assert_ptr_nonnull(loop_call_soon(loop, named, "warm"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, stop, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    order_next = order_bad = 0;
    refused_ran = o_ran = 0;
    ck_assert_ptr_nonnull(loop_call_soon(loop, m_, NULL));
    ck_assert_ptr_nonnull(loop_call_soon(loop, n_, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(refused_handle == NULL,
                  "call_soon accepted though the inbox could not be moved into `ready`: "
                  "it would overtake the posts left in the inbox");
    ck_assert_int_eq(refused_errno, ENOMEM);
    ck_assert_int_eq(refused_ran, 0);
    ck_assert_int_eq(o_ran, 1);
    ck_assert_msg(order_next == MANY, "%ld of %d posts ran", order_next, MANY);
    ck_assert_msg(order_bad == 0, "%ld posts ran out of order", order_bad);
    end_loop(loop);
}
END_TEST

START_TEST(no_lock_while_no_other_thread_posts)
{
    if (!counting_locks()) {
        puts("skipped: a sanitizer brings its own pthread_mutex_lock, which this test cannot count");
        return;
    }
    loop_t *loop = new_loop();
    long failed = 0;
    for (int r = 0; r < 3; r++) { /* warm-up */
        for (int i = 0; i < 100; i++)
            failed += loop_call_soon(loop, named, "x") == NULL;
        failed += loop_call_soon(loop, stop, NULL) == NULL;
        failed += loop_run_forever(loop) != 0;
        log_text[0] = '\0';
    }
    /* Check's assertions lock nothing, but count outside anyway. */
    long before = counted_locks;
    for (int r = 0; r < 20; r++) {
        for (int i = 0; i < 100; i++)
            failed += loop_call_soon(loop, named, "x") == NULL;
        failed += loop_call_soon(loop, stop, NULL) == NULL;
        failed += loop_run_forever(loop) != 0;
        log_text[0] = '\0';
    }
    long alone = counted_locks - before;
    /* One post: the loop takes the lock to move it, and then no more. */
    post_from_thread(loop, named, "posted");
    before = counted_locks;
    for (int r = 0; r < 20; r++) {
        for (int i = 0; i < 100; i++)
            failed += loop_call_soon(loop, named, "x") == NULL;
        failed += loop_call_soon(loop, stop, NULL) == NULL;
        failed += loop_run_forever(loop) != 0;
        log_text[0] = '\0';
    }
    long after_post = counted_locks - before;
    ck_assert_int_eq(failed, 0);
    ck_assert_msg(alone == 0,
                  "%ld pthread_mutex_lock calls on the loop's thread for 2,000 call_soons "
                  "run in 20 ticks, with no other thread posting: the loop should look "
                  "at inbox_full, not take the lock",
                  alone);
    ck_assert_msg(after_post <= 2,
                  "%ld pthread_mutex_lock calls for 2,000 call_soons after ONE post: the "
                  "move should leave inbox_full false once the inbox is empty",
                  after_post);
    end_loop(loop);
}
END_TEST

static Suite *inbox_suite(void)
{
    Suite *s = suite_create("exercise 2: the inbox");
    TCase *tc = tcase_create("inbox");
    tcase_add_test(tc, a_post_before_a_call_soon_runs_before_it);
    tcase_add_test(tc, a_post_before_the_snapshot_runs_in_this_tick_one_after_in_the_next);
    tcase_add_test(tc, a_post_made_while_the_loop_runs_callbacks_still_runs);
    tcase_add_test(tc, four_threads_posts_all_run_once_in_order);
    tcase_add_test(tc, out_of_memory_while_moving_loses_no_post);
    tcase_add_test(tc, no_lock_while_no_other_thread_posts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(inbox_suite());
}
