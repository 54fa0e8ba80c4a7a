/* Exercise 3 (chapter 08): errors that happen while handling errors.
 *
 * When a custom exception handler fails, CPython's default handler reports
 * "Unhandled error in exception handler" with the handler's exception;
 * Python's traceback of that exception then shows the callback's exception
 * first, because the handler failed while handling it:
 *
 *     RuntimeError: boom
 *
 *     During handling of the above exception, another exception occurred:
 *
 *     RuntimeError: handler failed
 *
 * (the lines "Traceback (most recent call last):" and the frames, which C
 * has not, left out).  Make loop_default_exception_handler() print the
 * chain in that order when the context it reports holds the context of the
 * failed handling; a context without one prints as before.
 *
 * The two chains printed from memory, told apart by the handler's message,
 * pass the first two tests; the fourth makes its types and messages up at
 * run time, so only a handler that reads them from the contexts passes.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"

static void namer(loop_callback callback, void *arg, char *buf, size_t size)
{
    (void)callback;
    snprintf(buf, size, "%s()", (const char *)arg);
}

static void boom(loop_t *loop, void *arg)
{
    loop_raise(loop, NULL, "%s", (const char *)arg);
}

static void failing(loop_t *loop, const loop_context_t *context, void *ctx)
{
    (void)context;
    (void)ctx;
    loop_raise(loop, "ValueError", "handler failed");
}

/* The same chain with other types and words: a default handler that
 * printed the first test's text without building it would pass that test
 * alone. */
static void disk_full(loop_t *loop, void *arg)
{
    (void)arg;
    loop_raise(loop, "OSError", "disk full");
}

static void failing_too(loop_t *loop, const loop_context_t *context, void *ctx)
{
    (void)context;
    (void)ctx;
    loop_raise(loop, "TypeError", "no handler today");
}

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

static size_t len; /* open_memstream writes it at each flush: not a local */

static const char *run_cb(loop_exception_handler handler, loop_callback cb, const char *name,
                          char **buf, FILE **f)
{
    *f = open_memstream(buf, &len);
    loop_t *loop = loop_new_virtual();
    loop_set_log(loop, *f);
    loop_set_namer(loop, namer);
    loop_set_exception_handler(loop, handler, NULL);
    loop_call_soon(loop, cb, (void *)name);
    loop_call_later(loop, 1, stop_cb, "stop");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    loop_close(loop);
    loop_free(loop);
    fflush(*f);
    return *buf;
}

static const char *run(loop_exception_handler handler, char **buf, FILE **f)
{
    return run_cb(handler, boom, "boom", buf, f);
}

START_TEST(failing_handler_chain)
{
    char *buf = NULL;
    FILE *f = NULL;
    const char *printed = run(failing, &buf, &f);
    ck_assert_str_eq(printed,
                     "Unhandled error in exception handler\n"
                     "context: {'message': 'Exception in callback boom()', 'exception': "
                     "RuntimeError('boom'), 'handle': <Handle boom()>}\n"
                     "RuntimeError: boom\n"
                     "\n"
                     "During handling of the above exception, another exception occurred:\n"
                     "\n"
                     "ValueError: handler failed\n");
    fclose(f);
    free(buf);
}
END_TEST

START_TEST(failing_handler_chain_other_errors)
{
    char *buf = NULL;
    FILE *f = NULL;
    const char *printed = run_cb(failing_too, disk_full, "write", &buf, &f);
    ck_assert_str_eq(printed,
                     "Unhandled error in exception handler\n"
                     "context: {'message': 'Exception in callback write()', 'exception': "
                     "OSError('disk full'), 'handle': <Handle write()>}\n"
                     "OSError: disk full\n"
                     "\n"
                     "During handling of the above exception, another exception occurred:\n"
                     "\n"
                     "TypeError: no handler today\n");
    fclose(f);
    free(buf);
}
END_TEST

START_TEST(plain_error_unchanged)
{
    char *buf = NULL;
    FILE *f = NULL;
    const char *printed = run(NULL, &buf, &f);
    ck_assert_str_eq(printed, "Exception in callback boom()\n"
                                          "handle: <Handle boom()>\n"
                                          "RuntimeError: boom\n");
    fclose(f);
    free(buf);
}
END_TEST

/* Names no handler can know in advance: made from the process id. */
static char cb_type[32], cb_msg[64], h_type[32], h_msg[64];

static void made_up(loop_t *loop, void *arg)
{
    (void)arg;
    loop_raise(loop, cb_type, "%s", cb_msg);
}

static void failing_made_up(loop_t *loop, const loop_context_t *context, void *ctx)
{
    (void)context;
    (void)ctx;
    loop_raise(loop, h_type, "%s", h_msg);
}

START_TEST(failing_handler_chain_made_up_at_run_time)
{
    unsigned id = (unsigned)getpid() * 7919u + (unsigned)_i;
    snprintf(cb_type, sizeof cb_type, "E%uError", id % 9973);
    snprintf(cb_msg, sizeof cb_msg, "step %u went wrong", id % 1009);
    snprintf(h_type, sizeof h_type, "H%uError", id % 997);
    snprintf(h_msg, sizeof h_msg, "handler %u gave up", id % 101);
    char expected[1024];
    snprintf(expected, sizeof expected,
             "Unhandled error in exception handler\n"
             "context: {'message': 'Exception in callback job()', 'exception': "
             "%s('%s'), 'handle': <Handle job()>}\n"
             "%s: %s\n"
             "\n"
             "During handling of the above exception, another exception occurred:\n"
             "\n"
             "%s: %s\n",
             cb_type, cb_msg, cb_type, cb_msg, h_type, h_msg);
    char *buf = NULL;
    FILE *f = NULL;
    const char *printed = run_cb(failing_made_up, made_up, "job", &buf, &f);
    ck_assert_str_eq(printed, expected);
    fclose(f);
    free(buf);
}
END_TEST

static Suite *exercise_suite(void)
{
    Suite *s = suite_create("08/3-chained-errors");
    TCase *tc = tcase_create("chain");
    tcase_add_test(tc, failing_handler_chain);
    tcase_add_test(tc, failing_handler_chain_other_errors);
    tcase_add_test(tc, plain_error_unchanged);
    tcase_add_loop_test(tc, failing_handler_chain_made_up_at_run_time, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(exercise_suite());
}
