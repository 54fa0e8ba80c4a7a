/* check_future_oom.c -- out of memory refuses a future's or a task's
 * outcome and changes nothing (chapter 09 on).
 *
 * Chapter 11 took the error storage out of the future (a future that
 * finishes with a result, as most do, carries no 192-byte exception, no
 * cancel message buffer): set_exception, cancel(msg) and Task.cancel(msg)
 * allocate it when they are called.  The rule is check_oom's: a call that
 * finds no memory fails with -1 and ENOMEM and leaves the future as it was
 * (not done, its done callbacks not scheduled), so the same call made again
 * once memory is back does everything once.  On chapters 09 and 10, whose
 * futures carry their buffers, these calls allocate nothing there to fail,
 * and each test checks that they simply succeed.
 *
 * How: tests/support/failalloc.h (linked with --wrap, tests/suites.mk) fails
 * the Nth allocation from the call on, for every N the call could reach.
 * Each test says the CPython 3.11 behaviour it keeps: the outcome and the
 * message are the ones asyncio gives, whichever attempt succeeded. */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "failalloc.h"

/* How many allocations a call may make here: more than any does. */
enum { MAX_ALLOCATIONS = 4 };

static int callbacks_run;

static void count_callback(loop_t *loop, future_t *f, void *arg)
{
    (void)loop, (void)f, (void)arg;
    callbacks_run++;
}

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* One tick: the done callbacks a completion scheduled run now. */
static void run_one_tick(loop_t *loop)
{
    ck_assert_ptr_nonnull(loop_call_soon(loop, stop, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

/* A coroutine that suspends once: a task to cancel before it starts. */
typedef struct waiter {
    coro_t coro;
} waiter_t;

static coro_status waiter_step(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_YIELD(c);
    CORO_END(c);
}

static void free_waiter(coro_t *c)
{
    free(c);
}

static task_t *new_waiter(loop_t *loop)
{
    waiter_t *w = malloc(sizeof *w);
    ck_assert_ptr_nonnull(w);
    task_t *t = loop_create_task(loop, coro_init(&w->coro, waiter_step, "waiter", free_waiter));
    ck_assert_ptr_nonnull(t);
    return t;
}

/* fut.set_exception(ValueError('boom')): refused while memory lacks, then
 * done with that exception, its callback run once. */
START_TEST(set_exception_refused_then_done)
{
    loop_t *loop = loop_new();
    loop_exception_t err = {.type = "ValueError", .message = "boom"}, out;
    for (int n = 1; n <= MAX_ALLOCATIONS; n++) {
        future_t *f = loop_create_future(loop);
        ck_assert_ptr_nonnull(f);
        callbacks_run = 0;
        ck_assert_int_eq(future_add_done_callback(f, count_callback, NULL), 0);
        failalloc_arm(n, 1);
        int rc = future_set_exception(f, &err);
        int err_no = errno;
        long failed = failalloc_failed;
        failalloc_disarm();
        if (failed) {
            ck_assert_int_eq(rc, -1);
            ck_assert_int_eq(err_no, ENOMEM);
            ck_assert(!future_done(f));
            run_one_tick(loop);
            ck_assert_int_eq(callbacks_run, 0); /* nothing was scheduled */
            ck_assert_int_eq(future_set_exception(f, &err), 0);
        } else {
            ck_assert_int_eq(rc, 0);
        }
        ck_assert(future_done(f));
        ck_assert_int_eq(future_exception(f, &out), 1);
        ck_assert_str_eq(out.type, "ValueError");
        ck_assert_str_eq(out.message, "boom");
        run_one_tick(loop);
        ck_assert_int_eq(callbacks_run, 1);
        future_release(f);
    }
    loop_close(loop);
    loop_free(loop);
}
END_TEST

/* fut.cancel(msg='bye'): refused while memory lacks (returns -1, not
 * False), then cancelled with that message. */
START_TEST(cancel_with_message_refused_then_cancelled)
{
    loop_t *loop = loop_new();
    loop_exception_t out;
    for (int n = 1; n <= MAX_ALLOCATIONS; n++) {
        future_t *f = loop_create_future(loop);
        ck_assert_ptr_nonnull(f);
        callbacks_run = 0;
        ck_assert_int_eq(future_add_done_callback(f, count_callback, NULL), 0);
        failalloc_arm(n, 1);
        int rc = future_cancel(f, "bye");
        int err_no = errno;
        long failed = failalloc_failed;
        failalloc_disarm();
        if (failed) {
            ck_assert_int_eq(rc, -1);
            ck_assert_int_eq(err_no, ENOMEM);
            ck_assert(!future_done(f));
            ck_assert_int_eq(future_cancel(f, "bye"), 1);
        } else {
            ck_assert_int_eq(rc, 1);
        }
        ck_assert(future_cancelled(f));
        ck_assert_int_eq(future_exception(f, &out), -1);
        ck_assert_str_eq(out.type, "CancelledError");
        ck_assert_str_eq(out.message, "bye");
        run_one_tick(loop);
        ck_assert_int_eq(callbacks_run, 1);
        future_release(f);
    }
    loop_close(loop);
    loop_free(loop);
}
END_TEST

/* task.cancel('stop') before its first step: refused while memory lacks
 * (cancelling() stays 0), then the task ends cancelled with 'stop'. */
START_TEST(task_cancel_refused_then_cancelled)
{
    loop_t *loop = loop_new();
    loop_exception_t out;
    for (int n = 1; n <= MAX_ALLOCATIONS; n++) {
        task_t *t = new_waiter(loop);
        failalloc_arm(n, 1);
        int rc = task_cancel(t, "stop");
        int err_no = errno;
        long failed = failalloc_failed;
        failalloc_disarm();
        if (failed) {
            ck_assert_int_eq(rc, -1);
            ck_assert_int_eq(err_no, ENOMEM);
            ck_assert_int_eq(task_cancelling(t), 0);
            ck_assert_int_eq(task_cancel(t, "stop"), 1);
        } else {
            ck_assert_int_eq(rc, 1);
        }
        ck_assert_int_eq(task_cancelling(t), 1);
        ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
        ck_assert(future_cancelled(task_future(t)));
        ck_assert_int_eq(future_exception(task_future(t), &out), -1);
        ck_assert_str_eq(out.message, "stop");
        task_release(t);
    }
    loop_close(loop);
    loop_free(loop);
}
END_TEST

/* task.cancel('one'); task.cancel('two'): the second message is the one the
 * CancelledError carries (tasks.py: self._cancel_message = msg each time). */
START_TEST(second_cancel_message_wins)
{
    loop_t *loop = loop_new();
    loop_exception_t out;
    task_t *t = new_waiter(loop);
    ck_assert_int_eq(task_cancel(t, "one"), 1);
    ck_assert_int_eq(task_cancel(t, "two"), 1);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_int_eq(future_exception(task_future(t), &out), -1);
    ck_assert_str_eq(out.message, "two");
    task_release(t);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

static Suite *future_oom_suite(void)
{
    Suite *s = suite_create("future_oom");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, set_exception_refused_then_done);
    tcase_add_test(tc, cancel_with_message_refused_then_cancelled);
    tcase_add_test(tc, task_cancel_refused_then_cancelled);
    tcase_add_test(tc, second_cancel_message_wins);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(future_oom_suite());
}
