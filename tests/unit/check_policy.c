/* check_policy.c -- the loop of a thread (chapter 10: policy.h), rule by
 * rule and message by message, as CPython 3.11.2's asyncio/events.py
 * (BaseDefaultEventLoopPolicy, get_event_loop, get_running_loop) and
 * runners.py have them:
 *   - the main thread that never called set_event_loop() gets a loop made
 *     for it, once; after set_event_loop(NULL) it gets "There is no current
 *     event loop in thread 'MainThread'.";
 *   - any other thread gets that message with its name: 'worker' for a
 *     thread named so, 'Thread-N' for one nobody named;
 *   - inside a running loop, get_event_loop() is the running loop, whatever
 *     is current; get_running_loop() outside one: "no running event loop";
 *   - set_event_loop() acts on the calling thread only;
 *   - new_event_loop() (and the main thread's made loop) come from the
 *     policy's factory;
 *   - in a thread running a loop, another loop is refused: "Cannot run the
 *     event loop while another loop is running";
 *   - asyncio.run() leaves the main thread with no current loop, so article
 *     004 §9.1's "错误示例" fails with "There is no current event loop",
 *     not with "Event loop is closed" (which a closed loop left current
 *     gives).
 * Each test starts with loop_policy_reset_thread(): without Check's fork
 * (CK_FORK=no, under valgrind) every test runs in one process. */
#define _GNU_SOURCE /* pthread_setname_np */
#include "policy.h"
#include "task.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"

/* The call returned NULL, with errno err and loop_policy_error() saying
 * exactly `says`. */
#define REFUSED_EXACTLY(call, err, says)                                                 \
    do {                                                                                 \
        errno = 0;                                                                       \
        loop_t *got_ = (call);                                                           \
        int errno_ = errno;                                                              \
        ck_assert_msg(got_ == NULL, "%s was not refused", #call);                        \
        ck_assert_int_eq(errno_, (err));                                                 \
        ck_assert_str_eq(loop_policy_error(), (says));                                   \
    } while (0)

static void free_loop(loop_t *loop)
{
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}

/* ---- a thread that runs one function and keeps what it saw ------------- */

/* Threads do not assert (Check's asserts belong to the test's own thread):
 * they write down what they saw, and the test asserts after the join. */
typedef struct seen {
    const char *thread_name; /* pthread_setname_np() it first; NULL: unnamed */
    loop_t *set;             /* loop_set_event_loop() it first, if not NULL */
    loop_t *got;             /* what loop_get_event_loop() returned */
    int err;                 /* and errno, if NULL */
    char said[128];          /* and loop_policy_error() */
    char name[64];           /* loop_thread_name() */
    char name_again[64];     /* asked a second time */
} seen_t;

static void *ask_in_thread(void *arg)
{
    seen_t *s = arg;
    if (s->thread_name != NULL)
        pthread_setname_np(pthread_self(), s->thread_name);
    if (s->set != NULL)
        loop_set_event_loop(s->set);
    errno = 0;
    s->got = loop_get_event_loop();
    s->err = errno;
    snprintf(s->said, sizeof s->said, "%s", loop_policy_error());
    loop_thread_name(s->name, sizeof s->name);
    loop_thread_name(s->name_again, sizeof s->name_again);
    return NULL;
}

static void run_in_thread(seen_t *s)
{
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, ask_in_thread, s), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
}

/* ---- the main thread ----------------------------------------------------- */

/* >>> loop = asyncio.get_event_loop()
 * >>> loop is asyncio.get_event_loop()
 * True                         (python3 -W error: no warning either) */
START_TEST(main_thread_gets_one_made_once)
{
    loop_policy_reset_thread();
    errno = 0;
    loop_t *loop = loop_get_event_loop();
    ck_assert_ptr_nonnull(loop);
    ck_assert_ptr_eq(loop_get_event_loop(), loop);
    ck_assert_int_eq(loop_is_running(loop), 0);
    char name[64];
    ck_assert_str_eq(loop_thread_name(name, sizeof name), "MainThread");
    loop_set_event_loop(NULL);
    free_loop(loop);
}
END_TEST

/* >>> asyncio.set_event_loop(None)
 * >>> asyncio.get_event_loop()
 * RuntimeError: There is no current event loop in thread 'MainThread'. */
START_TEST(main_thread_after_set_none)
{
    loop_policy_reset_thread();
    loop_set_event_loop(NULL);
    REFUSED_EXACTLY(loop_get_event_loop(), EINVAL,
                    "There is no current event loop in thread 'MainThread'.");
    /* and it stays so: no loop is made on a second try either */
    REFUSED_EXACTLY(loop_get_event_loop(), EINVAL,
                    "There is no current event loop in thread 'MainThread'.");
}
END_TEST

/* >>> loop = asyncio.new_event_loop(); asyncio.set_event_loop(loop)
 * >>> loop.close(); asyncio.get_event_loop().run_forever()
 * RuntimeError: Event loop is closed
 * (the one way 004 §9.1's message comes from get_event_loop(): a closed
 * loop left current) */
START_TEST(closed_loop_left_current)
{
    loop_policy_reset_thread();
    loop_t *loop = loop_new_event_loop();
    ck_assert_ptr_nonnull(loop);
    loop_set_event_loop(loop);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_t *current = loop_get_event_loop();
    ck_assert_ptr_eq(current, loop);
    ck_assert_int_eq(loop_run_forever(current), -1);
    ck_assert_str_eq(loop_error(current), "Event loop is closed");
    loop_set_event_loop(NULL);
    loop_free(loop);
}
END_TEST

/* ---- other threads -------------------------------------------------------- */

/* >>> def f(): asyncio.get_event_loop()
 * >>> threading.Thread(target=f, name="worker").start()
 * RuntimeError: There is no current event loop in thread 'worker'. */
START_TEST(named_thread_has_none)
{
    loop_policy_reset_thread();
    seen_t s = {.thread_name = "worker"};
    run_in_thread(&s);
    ck_assert_ptr_null(s.got);
    ck_assert_int_eq(s.err, EINVAL);
    ck_assert_str_eq(s.said, "There is no current event loop in thread 'worker'.");
    ck_assert_str_eq(s.name, "worker");
}
END_TEST

/* >>> class T(threading.Thread):
 * ...     def run(self): asyncio.get_event_loop()
 * >>> T().start()
 * RuntimeError: There is no current event loop in thread 'Thread-1'.
 * (then 'Thread-2' for the next one: Python numbers unnamed threads; with
 * target=f the name would be 'Thread-1 (f)') */
START_TEST(unnamed_thread_is_thread_n)
{
    loop_policy_reset_thread();
    seen_t a = {0}, b = {0};
    run_in_thread(&a);
    run_in_thread(&b);
    unsigned na = 0, nb = 0;
    ck_assert_int_eq(sscanf(a.name, "Thread-%u", &na), 1);
    ck_assert_int_eq(sscanf(b.name, "Thread-%u", &nb), 1);
    ck_assert_uint_ge(na, 1);
    ck_assert_uint_eq(nb, na + 1);
    ck_assert_str_eq(a.name_again, a.name); /* a thread keeps its number */
    char want[128];
    snprintf(want, sizeof want, "There is no current event loop in thread '%s'.", a.name);
    ck_assert_ptr_null(a.got);
    ck_assert_int_eq(a.err, EINVAL);
    ck_assert_str_eq(a.said, want);
}
END_TEST

/* >>> def f():
 * ...     asyncio.set_event_loop(loop)
 * ...     print(asyncio.get_event_loop() is loop)
 * >>> threading.Thread(target=f, name="t1").start()
 * True
 * >>> threading.Thread(target=g, name="other").start()  # g: get_event_loop()
 * RuntimeError: There is no current event loop in thread 'other'.
 * (set_event_loop() acts on the calling thread only) */
START_TEST(set_in_a_thread_is_that_threads)
{
    loop_policy_reset_thread();
    loop_set_event_loop(NULL);
    loop_t *loop = loop_new_virtual();
    ck_assert_ptr_nonnull(loop);
    seen_t t1 = {.thread_name = "t1", .set = loop};
    run_in_thread(&t1);
    ck_assert_ptr_eq(t1.got, loop);
    seen_t other = {.thread_name = "other"};
    run_in_thread(&other);
    ck_assert_ptr_null(other.got);
    ck_assert_str_eq(other.said, "There is no current event loop in thread 'other'.");
    REFUSED_EXACTLY(loop_get_event_loop(), EINVAL,
                    "There is no current event loop in thread 'MainThread'.");
    free_loop(loop);
}
END_TEST

/* ---- the running loop -------------------------------------------------------- */

typedef struct inside {
    loop_t *got;         /* get_event_loop() in the callback */
    loop_t *running;     /* get_running_loop() in the callback */
    loop_t *other;       /* a loop to try to run from the callback */
    int rc_other;        /* loop_run_forever(other) */
    int err_other;
    char said_other[128];
    int rc_same;         /* loop_run_forever(the running loop) */
    char said_same[128];
} inside_t;

static void look_inside(loop_t *loop, void *arg)
{
    inside_t *in = arg;
    in->got = loop_get_event_loop();
    in->running = loop_running_loop();
    if (in->other != NULL) {
        errno = 0;
        in->rc_other = loop_run_forever(in->other);
        in->err_other = errno;
        snprintf(in->said_other, sizeof in->said_other, "%s", loop_error(in->other));
        in->rc_same = loop_run_forever(loop);
        snprintf(in->said_same, sizeof in->said_same, "%s", loop_error(loop));
    }
    loop_stop(loop);
}

/* >>> asyncio.set_event_loop(a)
 * >>> b.call_soon(lambda: print(asyncio.get_event_loop() is b,
 * ...                           asyncio.get_running_loop() is b)); b.run_forever()
 * True True
 * >>> asyncio.get_event_loop() is a
 * True */
START_TEST(running_loop_wins)
{
    loop_policy_reset_thread();
    loop_t *a = loop_new_virtual(), *b = loop_new_virtual();
    loop_set_event_loop(a);
    inside_t in = {0};
    loop_call_soon(b, look_inside, &in);
    ck_assert_int_eq(loop_run_forever(b), 0);
    ck_assert_ptr_eq(in.got, b);
    ck_assert_ptr_eq(in.running, b);
    ck_assert_ptr_eq(loop_get_event_loop(), a);
    loop_set_event_loop(NULL);
    free_loop(a);
    free_loop(b);
}
END_TEST

/* >>> asyncio.get_running_loop()
 * RuntimeError: no running event loop */
START_TEST(no_running_loop_outside)
{
    loop_policy_reset_thread();
    REFUSED_EXACTLY(loop_running_loop(), ESRCH, "no running event loop");
}
END_TEST

static void *run_in_worker(void *arg)
{
    loop_t *loop = arg;
    pthread_setname_np(pthread_self(), "worker");
    loop_run_forever(loop);
    return NULL;
}

/* A loop running in thread 'worker'; from one of its callbacks:
 * >>> other.run_forever()
 * RuntimeError: Cannot run the event loop while another loop is running
 * >>> loop.run_forever()
 * RuntimeError: This event loop is already running */
START_TEST(another_loop_in_a_running_thread)
{
    loop_policy_reset_thread();
    loop_t *loop = loop_new_virtual(), *other = loop_new_virtual();
    inside_t in = {.other = other};
    loop_call_soon(loop, look_inside, &in);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, run_in_worker, loop), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_ptr_eq(in.got, loop);
    ck_assert_int_eq(in.rc_other, -1);
    ck_assert_int_eq(in.err_other, EBUSY);
    ck_assert_str_eq(in.said_other, "Cannot run the event loop while another loop is running");
    ck_assert_int_eq(in.rc_same, -1);
    ck_assert_str_eq(in.said_same, "This event loop is already running");
    free_loop(loop);
    free_loop(other);
}
END_TEST

/* ---- the policy's factory ------------------------------------------------------ */

typedef struct factory {
    int made;     /* how many loops it made */
    loop_t *last; /* the last one */
} factory_t;

static loop_t *counting_factory(void *ctx)
{
    factory_t *f = ctx;
    f->made++;
    f->last = loop_new_virtual();
    return f->last;
}

/* >>> class P(asyncio.DefaultEventLoopPolicy):
 * ...     def new_event_loop(self): print("made"); return super().new_event_loop()
 * >>> asyncio.set_event_loop_policy(P())
 * >>> asyncio.new_event_loop(); asyncio.get_event_loop()
 * made
 * made
 * >>> asyncio.set_event_loop_policy(None)   # the default again */
START_TEST(new_event_loop_uses_the_factory)
{
    loop_policy_reset_thread();
    factory_t f = {0, NULL};
    loop_policy_t p = {counting_factory, &f};
    loop_set_event_loop_policy(&p);
    loop_t *fresh = loop_new_event_loop();
    ck_assert_ptr_nonnull(fresh);
    ck_assert_int_eq(f.made, 1);
    ck_assert_ptr_eq(fresh, f.last);
    /* new_event_loop() does not make it current: the main thread's first
     * get_event_loop() makes another, with the same factory */
    loop_t *current = loop_get_event_loop();
    ck_assert_ptr_nonnull(current);
    ck_assert_ptr_ne(current, fresh);
    ck_assert_int_eq(f.made, 2);
    ck_assert_ptr_eq(current, f.last);
    loop_set_event_loop_policy(NULL);
    loop_t *plain = loop_new_event_loop();
    ck_assert_ptr_nonnull(plain);
    ck_assert_int_eq(f.made, 2); /* the default factory: loop_new() */
    loop_set_event_loop(NULL);
    free_loop(fresh);
    free_loop(current);
    free_loop(plain);
}
END_TEST

/* ---- asyncio.run() ----------------------------------------------------------- */

static coro_status return_none(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_END(c);
}

/* runners.py: Runner._lazy_init() calls set_event_loop(loop), close() calls
 * set_event_loop(None).  Article 004 §9.1's "错误示例":
 * >>> asyncio.run(main())
 * >>> asyncio.get_event_loop().run_until_complete(main())
 * RuntimeError: There is no current event loop in thread 'MainThread'.
 * (3.11.2, with or without -W error: not "Event loop is closed") */
START_TEST(run_main_leaves_no_current_loop)
{
    loop_policy_reset_thread();
    coro_t main;
    ck_assert_int_eq(loop_run_main(coro_init(&main, return_none, "main", NULL), NULL, NULL), 0);
    REFUSED_EXACTLY(loop_get_event_loop(), EINVAL,
                    "There is no current event loop in thread 'MainThread'.");
}
END_TEST

static Suite *policy_suite(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("main thread");
    tcase_add_test(tc, main_thread_gets_one_made_once);
    tcase_add_test(tc, main_thread_after_set_none);
    tcase_add_test(tc, closed_loop_left_current);
    suite_add_tcase(s, tc);
    tc = tcase_create("other threads");
    tcase_add_test(tc, named_thread_has_none);
    tcase_add_test(tc, unnamed_thread_is_thread_n);
    tcase_add_test(tc, set_in_a_thread_is_that_threads);
    suite_add_tcase(s, tc);
    tc = tcase_create("running loop");
    tcase_add_test(tc, running_loop_wins);
    tcase_add_test(tc, no_running_loop_outside);
    tcase_add_test(tc, another_loop_in_a_running_thread);
    suite_add_tcase(s, tc);
    tc = tcase_create("policy");
    tcase_add_test(tc, new_event_loop_uses_the_factory);
    tcase_add_test(tc, run_main_leaves_no_current_loop);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(policy_suite());
}
