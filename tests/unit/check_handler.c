/* check_handler.c -- failing callbacks, the exception handler, debug mode
 * (chapter 08).
 *
 * Written against chapter 08's loop.h and run against every later stage:
 *   - the default handler's output, line for line as CPython's logger
 *     prints it (message, the context's other keys, the error's line), and
 *     the rest of the snapshot still runs;
 *   - a custom handler gets the context; get/set; NULL restores the default;
 *   - a failing handler: the default one reports it, "Unhandled error in
 *     exception handler", with the context it was given;
 *   - KeyboardInterrupt and SystemExit escape loop_run_forever() (-1,
 *     EINTR), the loop stopped, not closed; what is left of the tick runs
 *     at the next run; a stop() asked in that tick is forgotten; a handler
 *     can make one escape too;
 *   - loop_raise() outside a callback is refused; loop_call_exception_handler
 *     from anywhere; an empty message;
 *   - a handle cancelled by its own callback is named None(), as CPython
 *     names it once cancel() dropped the callback;
 *   - handle_repr: TimerHandle's when= as Python's repr() writes a float;
 *   - debug mode: "Executing ... took 0.150 seconds" exactly when a callback
 *     ran for slow_callback_duration or more; not when debug mode was
 *     switched on inside it; slow_callback_duration's refusals.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "vloop.h"

/* The loop's log goes to memory: log_text() is what it printed so far. */
static char *log_buf;
static size_t log_len;
static FILE *log_file;

static loop_t *logged_loop(void)
{
    loop_t *loop = virtual_loop();
    log_file = open_memstream(&log_buf, &log_len);
    ck_assert_ptr_nonnull(log_file);
    loop_set_log(loop, log_file);
    loop_set_namer(loop, NULL);
    return loop;
}

static const char *log_text(void)
{
    fflush(log_file);
    return log_buf;
}

static void logged_finish(loop_t *loop)
{
    finish(loop);
    fclose(log_file);
    free(log_buf);
    log_buf = NULL;
}

/* The callbacks' names: their arg, a string, with "()" as CPython's. */
static void namer(loop_callback callback, void *arg, char *buf, size_t size)
{
    (void)callback;
    snprintf(buf, size, "%s()", arg != NULL ? (const char *)arg : "?");
}

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    label_add(arg);
}

static void boom(loop_t *loop, void *arg)
{
    label_add(arg);
    ck_assert_int_eq(loop_raise(loop, NULL, "%s went wrong", (const char *)arg), 0);
}

static void interrupt(loop_t *loop, void *arg)
{
    label_add(arg);
    loop_raise(loop, LOOP_KEYBOARD_INTERRUPT, "%s", (const char *)arg);
}

/* ---- the default handler ------------------------------------------------- */

START_TEST(default_handler_prints_and_loop_goes_on)
{
    loop_t *loop = logged_loop();
    loop_set_namer(loop, namer);
    loop_call_soon(loop, boom, "a");
    loop_call_soon(loop, note, "b");
    loop_call_later(loop, 1.5, boom, "t");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "a b t");
    ck_assert_str_eq(log_text(), "Exception in callback a()\n"
                                 "handle: <Handle a()>\n"
                                 "RuntimeError: a went wrong\n"
                                 "Exception in callback t()\n"
                                 "handle: <TimerHandle when=1.5 t()>\n"
                                 "RuntimeError: t went wrong\n");
    logged_finish(loop);
}
END_TEST

static void typed(loop_t *loop, void *arg)
{
    (void)arg;
    loop_raise(loop, "OSError", "[Errno %d] %s", EIO, strerror(EIO));
}

START_TEST(default_handler_error_type)
{
    loop_t *loop = logged_loop();
    loop_set_namer(loop, namer);
    loop_call_soon(loop, typed, "io");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_ptr_nonnull(strstr(log_text(), "\nOSError: [Errno 5] "));
    logged_finish(loop);
}
END_TEST

START_TEST(call_exception_handler_from_anywhere)
{
    loop_t *loop = logged_loop();
    loop_context_t c = {.message = "something happened"};
    loop_call_exception_handler(loop, &c);
    loop_context_t empty = {0};
    loop_call_exception_handler(loop, &empty);
    ck_assert_str_eq(log_text(), "something happened\nUnhandled exception in event loop\n");
    logged_finish(loop);
}
END_TEST

START_TEST(raise_outside_a_callback_refused)
{
    loop_t *loop = logged_loop();
    errno = 0;
    ck_assert_int_eq(loop_raise(loop, NULL, "nobody listens"), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(loop_run_forever(loop), 0); /* and nothing was recorded */
    ck_assert_str_eq(log_text(), "");
    logged_finish(loop);
}
END_TEST

static handle_t *self_handle;

static void cancel_self_then_fail(loop_t *loop, void *arg)
{
    (void)arg;
    handle_cancel(self_handle);
    loop_raise(loop, NULL, "x");
}

START_TEST(cancelled_handle_is_named_none)
{
    loop_t *loop = logged_loop();
    loop_set_namer(loop, namer);
    self_handle = loop_call_later(loop, 1, cancel_self_then_fail, "me");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(log_text(), "Exception in callback None()\n"
                                 "handle: <TimerHandle cancelled when=1.0>\n"
                                 "RuntimeError: x\n");
    logged_finish(loop);
}
END_TEST

/* ---- custom and failing handlers ------------------------------------------ */

static char got[512];

static void custom(loop_t *loop, const loop_context_t *c, void *ctx)
{
    char repr[128];
    snprintf(got, sizeof got, "%s|%s|%s|%s|%s", (const char *)ctx, c->message,
             c->exception ? c->exception->type : "-", c->exception ? c->exception->message : "-",
             c->handle ? handle_repr(c->handle, repr, sizeof repr) : "-");
    if (strcmp(ctx, "failing") == 0)
        loop_raise(loop, "ValueError", "handler failed");
    if (strcmp(ctx, "interrupt") == 0)
        loop_raise(loop, LOOP_KEYBOARD_INTERRUPT, "from the handler");
}

START_TEST(custom_handler_gets_the_context)
{
    loop_t *loop = logged_loop();
    loop_set_namer(loop, namer);
    ck_assert_ptr_null(loop_get_exception_handler(loop, NULL));
    loop_set_exception_handler(loop, custom, "custom");
    void *ctx = NULL;
    ck_assert_ptr_eq((void *)loop_get_exception_handler(loop, &ctx), (void *)custom);
    ck_assert_str_eq(ctx, "custom");
    loop_call_soon(loop, boom, "a");
    loop_call_soon(loop, note, "b");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(got, "custom|Exception in callback a()|RuntimeError|a went wrong|"
                          "<Handle a()>");
    ck_assert_str_eq(ran, "a b");
    ck_assert_str_eq(log_text(), ""); /* the default handler said nothing */
    loop_set_exception_handler(loop, NULL, NULL);
    ck_assert_ptr_null(loop_get_exception_handler(loop, NULL));
    logged_finish(loop);
}
END_TEST

START_TEST(failing_handler_falls_back_to_default)
{
    loop_t *loop = logged_loop();
    loop_set_namer(loop, namer);
    loop_set_exception_handler(loop, custom, "failing");
    loop_call_soon(loop, boom, "a");
    loop_call_soon(loop, note, "b");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "a b");
    ck_assert_str_eq(log_text(),
                     "Unhandled error in exception handler\n"
                     "context: {'message': 'Exception in callback a()', 'exception': "
                     "RuntimeError('a went wrong'), 'handle': <Handle a()>}\n"
                     "ValueError: handler failed\n");
    logged_finish(loop);
}
END_TEST

/* ---- escapes -------------------------------------------------------------- */

static void interrupt_and_stop(loop_t *loop, void *arg)
{
    loop_stop(loop);
    interrupt(loop, arg);
}

START_TEST(keyboard_interrupt_escapes_run_forever)
{
    loop_t *loop = logged_loop();
    loop_call_soon(loop, note, "a");
    loop_call_soon(loop, interrupt_and_stop, "ki");
    loop_call_soon(loop, note, "b");
    loop_call_soon(loop, note, "c");
    errno = 0;
    ck_assert_int_eq(loop_run_forever(loop), -1);
    ck_assert_int_eq(errno, EINTR);
    ck_assert_str_eq(loop_error(loop), "KeyboardInterrupt: ki");
    ck_assert_str_eq(ran, "a ki");
    ck_assert_int_eq(loop_get_state(loop), LOOP_NEW); /* stopped, not closed */
    ck_assert_str_eq(log_text(), "");                 /* never reached the handler */
    /* The stop() of that tick is forgotten, as run_forever's `finally`
     * forgets it: the next run runs b and c, then waits (the hook stops it
     * when there is nothing left). */
    loop_call_later(loop, 1, note, "later");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "a ki b c later");
    logged_finish(loop);
}
END_TEST

static void exit_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_raise(loop, LOOP_SYSTEM_EXIT, "2");
}

START_TEST(system_exit_escapes_run_forever)
{
    loop_t *loop = logged_loop();
    loop_call_soon(loop, exit_cb, NULL);
    ck_assert_int_eq(loop_run_forever(loop), -1);
    ck_assert_int_eq(errno, EINTR);
    ck_assert_str_eq(loop_error(loop), "SystemExit: 2");
    logged_finish(loop);
}
END_TEST

START_TEST(handler_can_escape_too)
{
    loop_t *loop = logged_loop();
    loop_set_exception_handler(loop, custom, "interrupt");
    loop_call_soon(loop, boom, "a");
    loop_call_soon(loop, note, "b");
    ck_assert_int_eq(loop_run_forever(loop), -1);
    ck_assert_str_eq(loop_error(loop), "KeyboardInterrupt: from the handler");
    ck_assert_str_eq(ran, "a");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "a b");
    logged_finish(loop);
}
END_TEST

/* ---- names ---------------------------------------------------------------- */

START_TEST(timer_repr_is_pythons)
{
    loop_t *loop = logged_loop();
    loop_set_namer(loop, namer);
    static const struct { double when; const char *repr; } cases[] = {
        {1, "<TimerHandle when=1.0 x()>"},
        {0.30000000000000004, "<TimerHandle when=0.30000000000000004 x()>"},
        {1e-9, "<TimerHandle when=1e-09 x()>"},
        {1.5e-5, "<TimerHandle when=1.5e-05 x()>"},
        {0.0001, "<TimerHandle when=0.0001 x()>"},
        {1e16, "<TimerHandle when=1e+16 x()>"},
        {123456789, "<TimerHandle when=123456789.0 x()>"},
        {-2.5, "<TimerHandle when=-2.5 x()>"},
        {0, "<TimerHandle when=0.0 x()>"},
    };
    char buf[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        handle_t *h = loop_call_at(loop, cases[i].when, note, "x");
        ck_assert_str_eq(handle_repr(h, buf, sizeof buf), cases[i].repr);
    }
    handle_t *h = loop_call_soon(loop, note, "y");
    ck_assert_str_eq(handle_repr(h, buf, sizeof buf), "<Handle y()>");
    handle_cancel(h);
    ck_assert_str_eq(handle_repr(h, buf, sizeof buf), "<Handle cancelled>");
    loop_set_debug(loop, 1); /* cancelled in debug mode: asyncio keeps the name */
    h = loop_call_soon(loop, note, "z");
    handle_cancel(h);
    ck_assert_str_eq(handle_repr(h, buf, sizeof buf), "<Handle cancelled z()>");
    logged_finish(loop);
}
END_TEST

/* ---- debug mode ------------------------------------------------------------ */

static void slow(loop_t *loop, void *arg)
{
    double seconds = *(const double *)arg;
    ck_assert_int_eq(loop_set_time(loop, loop_time(loop) + seconds), 0); /* "runs" that long */
}

static void slow_namer(loop_callback callback, void *arg, char *buf, size_t size)
{
    (void)callback;
    snprintf(buf, size, "slow(%.17g)", *(const double *)arg);
}

START_TEST(debug_warns_slow_callbacks)
{
    loop_t *loop = logged_loop();
    loop_set_namer(loop, slow_namer);
    static const double d150 = 0.15, d100 = 0.1, just_under = 0.09999999999999999;
    loop_call_soon(loop, slow, (void *)&d150); /* debug off: nothing */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(log_text(), "");
    ck_assert_int_eq(loop_get_debug(loop), 0);
    loop_set_debug(loop, 1);
    ck_assert_int_eq(loop_get_debug(loop), 1);
    loop_call_soon(loop, slow, (void *)&d150);
    loop_call_soon(loop, slow, (void *)&just_under);
    loop_call_later(loop, 1, slow, (void *)&d100); /* >= : warned */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(log_text(), "Executing <Handle slow(0.14999999999999999)> took 0.150 seconds\n"
                                 "Executing <TimerHandle when=1.15 slow(0.10000000000000001)> "
                                 "took 0.100 seconds\n");
    logged_finish(loop);
}
END_TEST

static void debug_on_then_slow(loop_t *loop, void *arg)
{
    loop_set_debug(loop, 1);
    slow(loop, arg);
}

START_TEST(debug_switched_on_inside_is_not_timed)
{
    loop_t *loop = logged_loop();
    static const double d = 0.5;
    loop_call_soon(loop, debug_on_then_slow, (void *)&d);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(log_text(), ""); /* `if self._debug:` was read before the call */
    logged_finish(loop);
}
END_TEST

START_TEST(slow_callback_duration_refusals)
{
    loop_t *loop = logged_loop();
    ck_assert_int_eq(loop_set_slow_callback_duration(loop, NAN), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(loop_set_slow_callback_duration(loop, -1), -1);
    ck_assert_int_eq(loop_set_slow_callback_duration(loop, INFINITY), -1);
    ck_assert_int_eq(loop_set_slow_callback_duration(loop, 0.5), 0);
    static const double d = 0.3;
    loop_set_debug(loop, 1);
    loop_call_soon(loop, slow, (void *)&d);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(log_text(), ""); /* 0.3 < 0.5 */
    logged_finish(loop);
}
END_TEST

static Suite *handler_suite(void)
{
    Suite *s = suite_create("handler");
    TCase *tc = tcase_create("default");
    tcase_add_test(tc, default_handler_prints_and_loop_goes_on);
    tcase_add_test(tc, default_handler_error_type);
    tcase_add_test(tc, call_exception_handler_from_anywhere);
    tcase_add_test(tc, raise_outside_a_callback_refused);
    tcase_add_test(tc, cancelled_handle_is_named_none);
    suite_add_tcase(s, tc);
    tc = tcase_create("custom");
    tcase_add_test(tc, custom_handler_gets_the_context);
    tcase_add_test(tc, failing_handler_falls_back_to_default);
    suite_add_tcase(s, tc);
    tc = tcase_create("escape");
    tcase_add_test(tc, keyboard_interrupt_escapes_run_forever);
    tcase_add_test(tc, system_exit_escapes_run_forever);
    tcase_add_test(tc, handler_can_escape_too);
    suite_add_tcase(s, tc);
    tc = tcase_create("debug");
    tcase_add_test(tc, timer_repr_is_pythons);
    tcase_add_test(tc, debug_warns_slow_callbacks);
    tcase_add_test(tc, debug_switched_on_inside_is_not_timed);
    tcase_add_test(tc, slow_callback_duration_refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(handler_suite());
}
