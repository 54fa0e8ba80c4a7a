/* Exercise 3 (chapter 09): gather's done callback.
 *
 * loop_gather() adds one done callback to every child; write what it does
 * each time a child finishes, as _done_callback inside tasks.py's gather()
 * does in 3.11:
 *   - count the child; if the gather future is done already (an earlier
 *     child failed, or it was cancelled), only mark the child's error as
 *     retrieved (fut.exception()), so that no "exception was never
 *     retrieved" is reported for it, and stop;
 *   - without return_exceptions, a child that was cancelled or failed
 *     finishes the gather future at once with that error (a cancelled
 *     child: CancelledError; 3.11 uses set_exception, so the gather future
 *     is FINISHED with that error, not CANCELLED);
 *   - when the last child is done: the outcomes in the children's order,
 *     each a result or (with return_exceptions) an error, a cancelled
 *     child a CancelledError; then set the result (or, if the gather
 *     future was asked to cancel meanwhile, CancelledError).
 * Article 004's 6.3 (safe_close: cancel every task, then
 * gather(*tasks, return_exceptions=True)) is the last test.
 *
 * The gather future's own cancel is part of it: a done callback that never
 * looks at g->cancel_requested passes the four others, so
 * the_gather_cancelled_meanwhile cancels the gather while its children
 * sleep, with return_exceptions: it must end with a CancelledError of its
 * own, not with the list of the children's.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "task.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "vloop.h"

/* async def child(d, fail): await asyncio.sleep(d); if fail: raise ValueError(fail); return d */
typedef struct child {
    coro_t coro;
    sleep_t sleep;
    double d;
    const char *fail;
} child_t;

static coro_status child_step(coro_t *c)
{
    child_t *k = (child_t *)c;
    CORO_BEGIN(c);
    CORO_CALL(c, sleep_init(&k->sleep, k->d));
    if (k->fail != NULL)
        CORO_RAISE(c, "ValueError", "%s", k->fail);
    CORO_RETURN(c, &k->d);
    CORO_END(c);
}

static future_t *spawn(loop_t *loop, child_t *k, double d, const char *fail)
{
    memset(k, 0, sizeof *k);
    k->d = d;
    k->fail = fail;
    task_t *t = loop_create_task(loop, coro_init(&k->coro, child_step, "child", NULL));
    ck_assert_ptr_nonnull(t);
    return task_future(t);
}

static void cancel_at(loop_t *loop, void *arg)
{
    (void)loop;
    ck_assert_int_eq(future_cancel(arg, "stop"), 1);
}

/* The gather future's done callback: when it ran, on the virtual clock. */
static void when_done(loop_t *loop, future_t *f, void *arg)
{
    (void)f;
    (void)arg;
    char line[32];
    snprintf(line, sizeof line, "done@%.1f", loop_time(loop));
    label_add(line);
}

static int reported; /* exception handler calls: "exception was never retrieved" */
static void count_reports(loop_t *loop, const loop_context_t *context, void *ctx)
{
    (void)loop;
    (void)context;
    (void)ctx;
    reported++;
}

static loop_t *setup(void)
{
    loop_t *loop = virtual_loop();
    reported = 0;
    loop_set_exception_handler(loop, count_reports, NULL);
    return loop;
}

static void release_all(future_t **f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        future_release(f[i]);
}

START_TEST(return_exceptions_waits_for_all_in_their_order)
{
    loop_t *loop = setup();
    child_t k[3];
    future_t *f[3] = {spawn(loop, &k[0], 3, NULL), spawn(loop, &k[1], 1, "bad"),
                      spawn(loop, &k[2], 5, NULL)};
    loop_call_later(loop, 2.0, cancel_at, f[2]);
    future_t *g = loop_gather(loop, f, 3, 1);
    ck_assert_ptr_nonnull(g);
    future_add_done_callback(g, when_done, NULL);
    ck_assert_int_eq(loop_run_until_complete(loop, g), 0);
    ck_assert_str_eq(ran, "done@3.0"); /* after the last child, at 3 */
    void *value = NULL;
    loop_exception_t error;
    ck_assert_int_eq(future_cancelled(g), 0);
    ck_assert_int_eq(future_result(g, &value, &error), 0);
    const gather_result_t *r = value;
    ck_assert_uint_eq(r->n, 3);
    ck_assert_int_eq(r->items[0].failed, 0);
    ck_assert_ptr_eq(r->items[0].value, &k[0].d);
    ck_assert_int_eq(r->items[1].failed, 1);
    ck_assert_str_eq(r->items[1].error.type, "ValueError");
    ck_assert_str_eq(r->items[1].error.message, "bad");
    ck_assert_int_eq(r->items[2].failed, 1);
    ck_assert_str_eq(r->items[2].error.type, "CancelledError");
    future_release(g);
    release_all(f, 3);
    finish(loop);
    ck_assert_int_eq(reported, 0); /* every error was retrieved */
}
END_TEST

START_TEST(first_error_finishes_it_at_once)
{
    loop_t *loop = setup();
    child_t k[3];
    future_t *f[3] = {spawn(loop, &k[0], 3, NULL), spawn(loop, &k[1], 1, "bad"),
                      spawn(loop, &k[2], 2, "worse")};
    future_t *g = loop_gather(loop, f, 3, 0);
    ck_assert_ptr_nonnull(g);
    future_add_done_callback(g, when_done, NULL);
    ck_assert_int_eq(loop_run_until_complete(loop, g), 0);
    ck_assert_str_eq(ran, "done@1.0");
    void *value = NULL;
    loop_exception_t error;
    ck_assert_int_eq(future_result(g, &value, &error), -1);
    ck_assert_str_eq(error.type, "ValueError");
    ck_assert_str_eq(error.message, "bad");
    /* The others go on: gather does not cancel them. */
    ck_assert_int_eq(future_done(f[0]), 0);
    ck_assert_int_eq(loop_run_until_complete(loop, f[0]), 0);
    ck_assert_int_eq(future_cancelled(f[0]), 0);
    ck_assert_int_eq(future_result(f[0], &value, &error), 0);
    ck_assert_ptr_eq(value, &k[0].d);
    ck_assert_int_eq(future_done(f[2]), 1);
    future_release(g);
    release_all(f, 3);
    finish(loop);
    /* "worse" came after the gather was done: its callback retrieved it. */
    ck_assert_int_eq(reported, 0);
}
END_TEST

START_TEST(a_cancelled_child_finishes_it_with_cancelled_error)
{
    loop_t *loop = setup();
    child_t k[2];
    future_t *f[2] = {spawn(loop, &k[0], 3, NULL), spawn(loop, &k[1], 1, NULL)};
    loop_call_later(loop, 0.5, cancel_at, f[1]);
    future_t *g = loop_gather(loop, f, 2, 0);
    ck_assert_ptr_nonnull(g);
    future_add_done_callback(g, when_done, NULL);
    ck_assert_int_eq(loop_run_until_complete(loop, g), 0);
    ck_assert_str_eq(ran, "done@0.5");
    loop_exception_t error;
    ck_assert_int_eq(future_cancelled(g), 0); /* 3.11: FINISHED, with the error */
    ck_assert_int_eq(future_exception(g, &error), 1);
    ck_assert_str_eq(error.type, "CancelledError");
    ck_assert_int_eq(loop_run_until_complete(loop, f[0]), 0);
    future_release(g);
    release_all(f, 2);
    finish(loop);
}
END_TEST

START_TEST(safe_close_of_article_004)
{
    loop_t *loop = setup();
    child_t k[3];
    future_t *f[3] = {spawn(loop, &k[0], 10, NULL), spawn(loop, &k[1], 20, NULL),
                      spawn(loop, &k[2], 30, "never")};
    /* Let them start: each now waits in its sleep. */
    child_t tick;
    future_t *first = spawn(loop, &tick, 0.5, NULL);
    ck_assert_int_eq(loop_run_until_complete(loop, first), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(future_cancel(f[i], NULL), 1);
    future_t *g = loop_gather(loop, f, 3, 1);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(loop_run_until_complete(loop, g), 0);
    ck_assert_double_eq(loop_time(loop), 0.5); /* no sleep ran out */
    void *value = NULL;
    loop_exception_t error;
    ck_assert_int_eq(future_result(g, &value, &error), 0);
    const gather_result_t *r = value;
    ck_assert_uint_eq(r->n, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(r->items[i].failed, 1);
        ck_assert_str_eq(r->items[i].error.type, "CancelledError");
        ck_assert_int_eq(future_cancelled(f[i]), 1);
    }
    future_release(g);
    future_release(first);
    release_all(f, 3);
    finish(loop);
}
END_TEST

static void cancel_gather(loop_t *loop, void *arg)
{
    (void)loop;
    ck_assert_int_eq(future_cancel(arg, "halt"), 1);
}

START_TEST(the_gather_cancelled_meanwhile)
{
    loop_t *loop = setup();
    child_t k[2];
    future_t *f[2] = {spawn(loop, &k[0], 1, NULL), spawn(loop, &k[1], 2, NULL)};
    future_t *g = loop_gather(loop, f, 2, 1);
    ck_assert_ptr_nonnull(g);
    loop_call_later(loop, 0.5, cancel_gather, g);
    ck_assert_int_eq(loop_run_until_complete(loop, g), 0);
    ck_assert_double_eq(loop_time(loop), 0.5);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(future_cancelled(f[i]), 1);
    loop_exception_t error;
    ck_assert_int_eq(future_cancelled(g), 0); /* 3.11: FINISHED, with the error */
    ck_assert_msg(future_exception(g, &error) == 1,
                  "a gather cancelled while its children ran (return_exceptions) got a "
                  "result: it must end with a CancelledError (outer._cancel_requested)");
    ck_assert_str_eq(error.type, "CancelledError");
    ck_assert_str_eq(error.message, "halt");
    future_release(g);
    release_all(f, 2);
    finish(loop);
    ck_assert_int_eq(reported, 0);
}
END_TEST

static Suite *exercise_suite(void)
{
    Suite *s = suite_create("09/3-gather");
    TCase *tc = tcase_create("gather");
    tcase_add_test(tc, return_exceptions_waits_for_all_in_their_order);
    tcase_add_test(tc, first_error_finishes_it_at_once);
    tcase_add_test(tc, a_cancelled_child_finishes_it_with_cancelled_error);
    tcase_add_test(tc, the_gather_cancelled_meanwhile);
    tcase_add_test(tc, safe_close_of_article_004);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(exercise_suite());
}
