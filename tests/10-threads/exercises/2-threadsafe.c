/* Exercise 2 (chapter 10): 题目3, a thread hands the loop a coroutine.
 *
 * Write the callback that loop_run_coroutine_threadsafe() sends to the
 * loop's thread with loop_call_soon_threadsafe(), as the callback() inside
 * tasks.py's run_coroutine_threadsafe does it in 3.11:
 *     futures._chain_future(ensure_future(coro, loop=loop), future)
 *   - wrap the coroutine in a task of the loop (on the loop's thread: a
 *     task is not thread-safe, which is why this is a callback at all);
 *   - chain the task to the concurrent future the calling thread holds:
 *     the task's outcome (result, error, cancellation) is copied into it,
 *     and a cancellation of the concurrent future, from any thread, cancels
 *     the task on the loop's thread (through call_soon_threadsafe: the
 *     task may be cancelled only there);
 *   - if the task cannot be made, the concurrent future fails with the
 *     error, so that no waiter hangs.
 * The loop runs in a thread of its own, as in article 003 and 004 §8.3; the
 * test's own thread is the one that hands it coroutines and waits.
 */
#define _POSIX_C_SOURCE 200809L
#include "executor.h"
#include "handler.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
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
#define WAIT wait_limit()

/* ---------------------------------------------- a loop in its thread */
static loop_t *loop;
static pthread_t loop_thread;

static void *run_loop(void *arg)
{
    (void)arg;
    ck_assert_int_eq(loop_run_forever(loop), 0);
    return NULL;
}

static atomic_int loop_started;
static void started(loop_t *l, void *arg)
{
    (void)l;
    (void)arg;
    atomic_store(&loop_started, 1);
}
static void wait_flag(atomic_int *flag, const char *what);

/* A loop running in its thread: this returns once it runs (a callback sent
 * home has run), so that every coroutine the test hands over finds it
 * running. */
static void start_loop(void)
{
    loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    /* Debug mode: a task made in the calling thread (loop_create_task
     * calls loop_call_soon) is refused there, not a silent data race. */
    loop_set_debug(loop, 1);
    loop_set_slow_callback_duration(loop, 1e9); /* the gate's wait is not slow work */
    ck_assert_int_eq(pthread_create(&loop_thread, NULL, run_loop, NULL), 0);
    atomic_store(&loop_started, 0);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, started, NULL));
    wait_flag(&loop_started, "the loop's first callback");
}

static void stop(loop_t *l, void *arg)
{
    (void)arg;
    loop_stop(l);
}

static void stop_loop(void)
{
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, stop, NULL));
    ck_assert_int_eq(pthread_join(loop_thread, NULL), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    loop = NULL;
}

/* --------------------------------------------------- the coroutines */
/* async def add(a, b, fail):
 *     on_loop = current thread is the loop's; await asyncio.sleep(0.01)
 *     if fail: raise ValueError(f"no {a}+{b}")
 *     return a + b */
typedef struct add {
    coro_t coro;
    sleep_t sleep;
    long a, b, sum;
    int fail;
    int on_loop;   /* where its first step ran */
    int in_task;   /* it ran as a task of the loop */
    atomic_int released;
} add_t;

static void add_release(coro_t *c)
{
    atomic_store(&((add_t *)c)->released, 1);
}

static coro_status add_step(coro_t *c)
{
    add_t *k = (add_t *)c;
    CORO_BEGIN(c);
    k->on_loop = pthread_equal(pthread_self(), loop_thread);
    k->in_task = loop_current_task(loop) != NULL;
    CORO_CALL(c, sleep_init(&k->sleep, 0.01));
    if (k->fail)
        CORO_RAISE(c, "ValueError", "no %ld+%ld", k->a, k->b);
    k->sum = k->a + k->b;
    CORO_RETURN(c, &k->sum);
    CORO_END(c);
}

static coro_t *add_init(add_t *k, long a, long b, int fail)
{
    memset(k, 0, sizeof *k);
    k->a = a;
    k->b = b;
    k->fail = fail;
    atomic_init(&k->released, 0);
    return coro_init(&k->coro, add_step, "add", add_release);
}

/* async def hang(): started = True; try: await loop.create_future()
 *                   except CancelledError: seen = True; raise */
typedef struct hang {
    coro_t coro;
    future_t *never;
    atomic_int started;
    atomic_int saw_cancel;
    atomic_int released;
} hang_t;

static void hang_release(coro_t *c)
{
    hang_t *h = (hang_t *)c;
    future_release(h->never);
    h->never = NULL;
    atomic_store(&h->released, 1);
}

static coro_status hang_step(coro_t *c)
{
    hang_t *h = (hang_t *)c;
    CORO_BEGIN(c);
    atomic_store(&h->started, 1);
    h->never = loop_create_future(loop);
    if (h->never == NULL)
        CORO_RAISE(c, "MemoryError", "%s", "no future");
    CORO_TRY_AWAIT(c, h->never);
    if (!c->failed)
        CORO_RETURN(c, NULL);
    if (strcmp(c->error.type, "CancelledError") == 0)
        atomic_store(&h->saw_cancel, 1);
    CORO_RERAISE(c);
    CORO_END(c);
}

static coro_t *hang_init(hang_t *h)
{
    memset(h, 0, sizeof *h);
    atomic_init(&h->started, 0);
    atomic_init(&h->saw_cancel, 0);
    atomic_init(&h->released, 0);
    return coro_init(&h->coro, hang_step, "hang", hang_release);
}

/* Wait (really) until *flag is set, or fail after WAIT seconds. */
static void wait_flag(atomic_int *flag, const char *what)
{
    for (int i = 0; i < (int)(WAIT * 200) && !atomic_load(flag); i++)
        nanosleep(&(struct timespec){.tv_nsec = 5 * 1000 * 1000}, NULL);
    ck_assert_msg(atomic_load(flag), "%s never happened", what);
}

/* A callback that holds the loop's thread until the test opens the gate. */
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

static void hold_loop(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = gate_entered = 0;
    pthread_mutex_unlock(&gate_lock);
    ck_assert_ptr_nonnull(loop_call_soon_threadsafe(loop, gate, NULL));
    pthread_mutex_lock(&gate_lock);
    while (!gate_entered)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

static void release_loop(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

/* ------------------------------------------------------------ tests */
START_TEST(the_result_comes_back_to_the_calling_thread)
{
    start_loop();
    long a = (long)time(NULL) % 10007, b = 31;
    enum { N = 5 };
    add_t k[N];
    cfuture_t *f[N];
    for (int i = 0; i < N; i++) {
        f[i] = loop_run_coroutine_threadsafe(loop, add_init(&k[i], a + i, b * i, 0));
        ck_assert_ptr_nonnull(f[i]);
    }
    for (int i = 0; i < N; i++) {
        void *value = NULL;
        loop_exception_t error;
        memset(&error, 0, sizeof error);
        ck_assert_msg(cfuture_result(f[i], WAIT, &value, &error) == 0, "%d: %s: %s", i,
                      error.type, error.message);
        ck_assert_ptr_eq(value, &k[i].sum);
        ck_assert_int_eq(k[i].sum, a + i + b * i);
        ck_assert_int_eq(k[i].on_loop, 1); /* it ran on the loop's thread */
        ck_assert_int_eq(k[i].in_task, 1); /* as a task */
        cfuture_release(f[i]);
    }
    stop_loop();
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(atomic_load(&k[i].released), 1);
}
END_TEST

START_TEST(an_error_comes_back_as_the_error)
{
    start_loop();
    add_t k;
    long a = (long)time(NULL) % 977;
    cfuture_t *f = loop_run_coroutine_threadsafe(loop, add_init(&k, a, 2, 1));
    ck_assert_ptr_nonnull(f);
    loop_exception_t error;
    memset(&error, 0, sizeof error);
    ck_assert_int_eq(cfuture_result(f, WAIT, NULL, &error), -1);
    ck_assert_int_eq(errno, EIO);
    ck_assert_str_eq(error.type, "ValueError");
    char want[64];
    snprintf(want, sizeof want, "no %ld+2", a);
    ck_assert_str_eq(error.message, want);
    ck_assert_int_eq(cfuture_exception(f, 0, &error), 1);
    cfuture_release(f);
    stop_loop();
}
END_TEST

START_TEST(a_timeout_leaves_it_running_and_a_cancel_reaches_the_task)
{
    start_loop();
    hang_t h;
    cfuture_t *f = loop_run_coroutine_threadsafe(loop, hang_init(&h));
    ck_assert_ptr_nonnull(f);
    wait_flag(&h.started, "the coroutine's first step");
    loop_exception_t error;
    memset(&error, 0, sizeof error);
    ck_assert_int_eq(cfuture_result(f, 0.05, NULL, &error), -1);
    ck_assert_int_eq(errno, ETIMEDOUT);
    ck_assert_str_eq(error.type, "TimeoutError");
    ck_assert_int_eq(cfuture_done(f), 0); /* a timeout is the waiter's, not the job's */
    /* Cancelling the concurrent future, in this thread, cancels the task
     * in the loop's: the coroutine sees CancelledError at its await. */
    ck_assert_int_eq(cfuture_cancel(f), 1);
    wait_flag(&h.saw_cancel, "CancelledError in the coroutine");
    ck_assert_int_eq(cfuture_result(f, 0, NULL, &error), -1);
    ck_assert_int_eq(errno, ECANCELED);
    cfuture_release(f);
    stop_loop();
    ck_assert_int_eq(atomic_load(&h.released), 1);
}
END_TEST

START_TEST(cancelled_before_the_loop_saw_it_the_cancel_still_arrives)
{
    start_loop();
    hold_loop(); /* the loop's thread is busy in a callback */
    hang_t h;
    cfuture_t *f = loop_run_coroutine_threadsafe(loop, hang_init(&h));
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(cfuture_cancel(f), 1); /* before the callback made the task */
    release_loop();
    /* The chain finds the concurrent future cancelled already, and sends
     * task.cancel home with call_soon_threadsafe: it is queued behind the
     * task's first step, so the coroutine starts, and meets the
     * CancelledError at its first await (CPython does the same). */
    wait_flag(&h.saw_cancel, "CancelledError in the coroutine");
    ck_assert_int_eq(atomic_load(&h.started), 1);
    loop_exception_t error;
    ck_assert_int_eq(cfuture_result(f, 0, NULL, &error), -1);
    ck_assert_int_eq(errno, ECANCELED);
    cfuture_release(f);
    stop_loop();
    ck_assert_int_eq(atomic_load(&h.released), 1);
}
END_TEST

/* Several threads, each handing the loop coroutines and waiting for them. */
enum { T = 4, N = 40 };
static add_t many[T][N];
static long many_seed;

static void *hand_over(void *arg)
{
    int t = (int)(long)arg;
    cfuture_t *f[N];
    for (int i = 0; i < N; i++) {
        f[i] = loop_run_coroutine_threadsafe(loop, add_init(&many[t][i], many_seed + t, i, i % 7 == 3));
        if (f[i] == NULL)
            return "refused";
    }
    const char *wrong = NULL;
    for (int i = 0; i < N; i++) {
        void *value = NULL;
        loop_exception_t error;
        int rc = cfuture_result(f[i], WAIT, &value, &error);
        if (i % 7 == 3 ? rc != -1 || strcmp(error.type, "ValueError") != 0
                       : rc != 0 || *(long *)value != many_seed + t + i)
            wrong = "a wrong outcome";
        cfuture_release(f[i]);
    }
    return (void *)wrong;
}

START_TEST(many_threads_many_coroutines)
{
    start_loop();
    many_seed = (long)time(NULL) % 1000;
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, hand_over, (void *)(long)t), 0);
    for (int t = 0; t < T; t++) {
        void *wrong = NULL;
        ck_assert_int_eq(pthread_join(th[t], &wrong), 0);
        ck_assert_msg(wrong == NULL, "thread %d: %s", t, (const char *)wrong);
    }
    stop_loop();
    for (int t = 0; t < T; t++)
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(atomic_load(&many[t][i].released), 1);
}
END_TEST

START_TEST(a_closed_loop_is_refused)
{
    loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_int_eq(loop_close(loop), 0);
    hang_t h;
    ck_assert_ptr_null(loop_run_coroutine_threadsafe(loop, hang_init(&h)));
    ck_assert_int_eq(errno, EBADF);
    ck_assert_int_eq(atomic_load(&h.released), 0); /* still the caller's */
    loop_free(loop);
    loop = NULL;
}
END_TEST

static Suite *threadsafe_suite(void)
{
    Suite *s = suite_create("exercise 2: run_coroutine_threadsafe");
    TCase *tc = tcase_create("threadsafe");
    tcase_add_test(tc, the_result_comes_back_to_the_calling_thread);
    tcase_add_test(tc, an_error_comes_back_as_the_error);
    tcase_add_test(tc, a_timeout_leaves_it_running_and_a_cancel_reaches_the_task);
    tcase_add_test(tc, cancelled_before_the_loop_saw_it_the_cancel_still_arrives);
    tcase_add_test(tc, many_threads_many_coroutines);
    tcase_add_test(tc, a_closed_loop_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(threadsafe_suite());
}
