/* check_future.c -- asyncio.Future and asyncio.gather() in C (chapter 09).
 *
 * Written against chapter 09's future.h and run against every later stage.
 * Each test names the lines of CPython 3.11 (Lib/asyncio/futures.py,
 * tasks.py, and the C twin Modules/_asynciomodule.c whose words the
 * refusals use) that it pins:
 *   - every state transition and every refusal: set_result / set_exception
 *     / cancel on a done future, result() and exception() on a pending or a
 *     cancelled one, StopIteration refused;
 *   - done callbacks: scheduled with call_soon, never called at once, in
 *     the order they were added, one tick later; added to a done future:
 *     scheduled at once; remove_done_callback removes every equal pair;
 *   - repr strings, as asyncio prints them;
 *   - "Future exception was never retrieved" on the last release, and only
 *     when nobody retrieved the error and the future was not cancelled;
 *   - NULL arguments, a closed loop, a future that outlives its loop;
 *   - gather(): results in argument order, the first error wins, a
 *     cancelled child, return_exceptions, a child listed twice, no child,
 *     cancelling the gather, a child failing after the gather is done.
 * The loop runs on the virtual clock (vloop.h); `ticks` counts its ticks,
 * and a callback logs "label@tick".
 */
#define _POSIX_C_SOURCE 200809L
#include "future.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "vloop.h"

/* The loop's log goes to memory: log_text() is what it printed so far. */
static char *log_buf;
static size_t log_len;
static FILE *log_file;

/* Done callbacks are named by their arg, a string, as CPython names a
 * function: "a()". */
static void namer(loop_callback callback, void *arg, char *buf, size_t size)
{
    (void)callback;
    snprintf(buf, size, "%s()", arg != NULL ? (const char *)arg : "?");
}

static loop_t *logged_loop(void)
{
    loop_t *loop = virtual_loop();
    log_file = open_memstream(&log_buf, &log_len);
    ck_assert_ptr_nonnull(log_file);
    loop_set_log(loop, log_file);
    loop_set_namer(loop, namer);
    return loop;
}

static const char *log_text(void)
{
    fflush(log_file);
    return log_buf != NULL ? log_buf : "";
}

static void logged_finish(loop_t *loop)
{
    finish(loop);
    fclose(log_file);
    free(log_buf);
    log_buf = NULL;
}

/* A done callback: log "arg@tick". */
static void done_note(loop_t *loop, future_t *f, void *arg)
{
    (void)loop;
    (void)f;
    label_add_at(arg, ticks);
}

static void other_note(loop_t *loop, future_t *f, void *arg)
{
    done_note(loop, f, arg);
}

static void run(loop_t *loop)
{
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

/* future_result()'s error, as "Type: message". */
static const char *error_of(future_t *f)
{
    static char buf[256];
    loop_exception_t e;
    memset(&e, 0, sizeof e);
    void *value = NULL;
    if (future_result(f, &value, &e) == 0)
        return "(no error)";
    snprintf(buf, sizeof buf, "%s: %s", e.type, e.message);
    return buf;
}

/* ---- states and refusals -------------------------------------------------- */

START_TEST(new_future_is_pending)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_eq(future_get_loop(f), loop);
    ck_assert_int_eq(future_get_state(f), FUTURE_PENDING);
    ck_assert_int_eq(future_done(f), 0);
    ck_assert_int_eq(future_cancelled(f), 0);
    ck_assert_str_eq(future_state_name(FUTURE_PENDING), "PENDING");
    ck_assert_str_eq(future_state_name(FUTURE_CANCELLED), "CANCELLED");
    ck_assert_str_eq(future_state_name(FUTURE_FINISHED), "FINISHED");
    future_release(f);
    finish(loop);
}
END_TEST

/* futures.py result(): `if self._state != _FINISHED: raise
 * exceptions.InvalidStateError('Result is not set.')`; exception():
 * 'Exception is not set.' */
START_TEST(pending_result_and_exception_refused)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    ck_assert_str_eq(error_of(f), "InvalidStateError: Result is not set.");
    loop_exception_t e;
    ck_assert_int_eq(future_exception(f, &e), -1);
    ck_assert_str_eq(e.type, "InvalidStateError");
    ck_assert_str_eq(e.message, "Exception is not set.");
    ck_assert_int_eq(future_get_state(f), FUTURE_PENDING);
    future_release(f);
    finish(loop);
}
END_TEST

START_TEST(set_result_then_result)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    int x = 42;
    ck_assert_int_eq(future_set_result(f, &x), 0);
    ck_assert_int_eq(future_get_state(f), FUTURE_FINISHED);
    ck_assert_int_eq(future_done(f), 1);
    ck_assert_int_eq(future_cancelled(f), 0);
    void *value = NULL;
    ck_assert_int_eq(future_result(f, &value, NULL), 0);
    ck_assert_ptr_eq(value, &x);
    loop_exception_t e;
    ck_assert_int_eq(future_exception(f, &e), 0); /* exception() of a result: None */
    future_release(f);
    finish(loop);
}
END_TEST

/* _asynciomodule.c future_set_result / future_set_exception:
 * `PyErr_SetString(asyncio_InvalidStateError, "invalid state")`, and
 * cancel() of a done future: `return False`. */
START_TEST(done_future_refuses_everything)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    ck_assert_int_eq(future_set_result(f, NULL), 0);
    errno = 0;
    ck_assert_int_eq(future_set_result(f, f), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "invalid state");
    errno = 0;
    ck_assert_int_eq(future_fail(f, NULL, "late"), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "invalid state");
    ck_assert_int_eq(future_cancel(f, "late"), 0);
    ck_assert_int_eq(future_get_state(f), FUTURE_FINISHED);
    void *value = f;
    ck_assert_int_eq(future_result(f, &value, NULL), 0);
    ck_assert_ptr_null(value); /* the first result stays */

    future_t *g = loop_create_future(loop); /* cancelled: the same */
    ck_assert_int_eq(future_cancel(g, NULL), 1);
    ck_assert_int_eq(future_cancel(g, NULL), 0);
    ck_assert_int_eq(future_set_result(g, NULL), -1);
    ck_assert_str_eq(loop_error(loop), "invalid state");
    ck_assert_int_eq(future_fail(g, "ValueError", "x"), -1);
    ck_assert_int_eq(future_get_state(g), FUTURE_CANCELLED);

    future_t *h = loop_create_future(loop); /* failed: the same */
    ck_assert_int_eq(future_fail(h, "ValueError", "v"), 0);
    ck_assert_int_eq(future_set_result(h, NULL), -1);
    ck_assert_int_eq(future_fail(h, "ValueError", "w"), -1);
    ck_assert_str_eq(error_of(h), "ValueError: v");
    future_release(f);
    future_release(g);
    future_release(h);
    finish(loop);
}
END_TEST

/* futures.py set_exception(): a copy of the error; result() raises it,
 * exception() returns it. type NULL: RuntimeError (future.h). */
START_TEST(set_exception_then_result_raises)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    loop_exception_t e = {.type = "OSError", .message = "disk"};
    ck_assert_int_eq(future_set_exception(f, &e), 0);
    strcpy(e.message, "changed after"); /* the future holds a copy */
    ck_assert_int_eq(future_get_state(f), FUTURE_FINISHED);
    ck_assert_str_eq(error_of(f), "OSError: disk");
    loop_exception_t got;
    ck_assert_int_eq(future_exception(f, &got), 1);
    ck_assert_str_eq(got.type, "OSError");
    ck_assert_str_eq(got.message, "disk");

    future_t *g = loop_create_future(loop);
    ck_assert_int_eq(future_fail(g, NULL, "n=%d", 3), 0);
    ck_assert_str_eq(error_of(g), "RuntimeError: n=3");
    future_release(f);
    future_release(g);
    finish(loop);
}
END_TEST

/* futures.py set_exception():
 *     if type(exception) is StopIteration:
 *         raise TypeError("StopIteration interacts badly with generators "
 *                         "and cannot be raised into a Future")
 * and the future stays pending. */
START_TEST(stop_iteration_refused)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    errno = 0;
    ck_assert_int_eq(future_fail(f, "StopIteration", "x"), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "StopIteration interacts badly with generators "
                                       "and cannot be raised into a Future");
    ck_assert_int_eq(future_get_state(f), FUTURE_PENDING);
    ck_assert_int_eq(future_set_result(f, NULL), 0); /* still usable */
    future_release(f);
    finish(loop);
}
END_TEST

/* futures.py cancel(): CANCELLED; result() and exception() raise
 * _make_cancelled_error(), a CancelledError carrying the cancel message
 * (an empty one without). */
START_TEST(cancelled_future_raises_cancelled_error)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    ck_assert_int_eq(future_cancel(f, "why"), 1);
    ck_assert_int_eq(future_get_state(f), FUTURE_CANCELLED);
    ck_assert_int_eq(future_done(f), 1);
    ck_assert_int_eq(future_cancelled(f), 1);
    ck_assert_str_eq(error_of(f), "CancelledError: why");
    loop_exception_t e;
    ck_assert_int_eq(future_exception(f, &e), -1);
    ck_assert_str_eq(e.type, "CancelledError");
    ck_assert_str_eq(e.message, "why");

    future_t *g = loop_create_future(loop);
    ck_assert_int_eq(future_cancel(g, NULL), 1);
    ck_assert_str_eq(error_of(g), "CancelledError: ");
    future_release(f);
    future_release(g);
    finish(loop);
}
END_TEST

/* ---- done callbacks --------------------------------------------------------- */

/* futures.py __schedule_callbacks(): `for callback, ctx in callbacks:
 * self._loop.call_soon(callback, self, context=ctx)` -- in the order they
 * were added, none of them called by set_result itself. */
START_TEST(callbacks_scheduled_in_order_one_tick_later)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    ck_assert_int_eq(future_add_done_callback(f, done_note, "a"), 0);
    ck_assert_int_eq(future_add_done_callback(f, other_note, "b"), 0);
    ck_assert_int_eq(future_add_done_callback(f, done_note, "c"), 0);
    ck_assert_int_eq(future_set_result(f, NULL), 0);
    ck_assert_int_eq(nran, 0); /* scheduled, not called */
    run(loop);
    ck_assert_str_eq(ran, "a@1 b@1 c@1");
    future_release(f);
    finish(loop);
}
END_TEST

static void set_it(loop_t *loop, void *arg)
{
    (void)loop;
    label_add_at("set", ticks);
    ck_assert_int_eq(future_set_result(arg, NULL), 0);
}

static void cancel_it(loop_t *loop, void *arg)
{
    (void)loop;
    label_add_at("cancel", ticks);
    ck_assert_int_eq(future_cancel(arg, NULL), 1);
}

/* Completed from a callback in tick 1: its callbacks run in tick 2, for
 * set_result and cancel alike. */
START_TEST(callbacks_run_the_tick_after)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop), *g = loop_create_future(loop);
    future_add_done_callback(f, done_note, "f");
    future_add_done_callback(g, done_note, "g");
    loop_call_soon(loop, set_it, f);
    loop_call_soon(loop, cancel_it, g);
    run(loop);
    ck_assert_str_eq(ran, "set@1 cancel@1 f@2 g@2");
    future_release(f);
    future_release(g);
    finish(loop);
}
END_TEST

/* futures.py add_done_callback(): `if self._state != _PENDING:
 * self._loop.call_soon(fn, self, context=context)` -- scheduled at once,
 * still not called at once. */
START_TEST(add_to_done_future_schedules_at_once)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    future_set_result(f, NULL);
    ck_assert_int_eq(future_add_done_callback(f, done_note, "late"), 0);
    ck_assert_int_eq(nran, 0);
    run(loop);
    ck_assert_str_eq(ran, "late@1");
    future_release(f);
    finish(loop);
}
END_TEST

/* futures.py remove_done_callback(): "Remove all instances of a callback
 * from the "call when done" list.  Returns the number of callbacks
 * removed."  Equal means the same (fn, arg) here. */
START_TEST(remove_done_callback_removes_all_equal)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    future_add_done_callback(f, done_note, "a");
    future_add_done_callback(f, done_note, "b");
    future_add_done_callback(f, done_note, "a");
    future_add_done_callback(f, other_note, "a");
    future_add_done_callback(f, done_note, "a");
    ck_assert_uint_eq(future_remove_done_callback(f, done_note, "a"), 3);
    ck_assert_uint_eq(future_remove_done_callback(f, done_note, "a"), 0);
    ck_assert_uint_eq(future_remove_done_callback(f, done_note, "zz"), 0);
    future_add_done_callback(f, done_note, "c"); /* the list's tail is right */
    future_set_result(f, NULL);
    run(loop);
    ck_assert_str_eq(ran, "b@1 a@1 c@1");
    future_release(f);
    finish(loop);
}
END_TEST

/* Once scheduled, a callback is no longer in the list: removing it does
 * nothing (futures.py: __schedule_callbacks empties self._callbacks). */
START_TEST(remove_after_done_removes_nothing)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    future_add_done_callback(f, done_note, "a");
    future_set_result(f, NULL);
    ck_assert_uint_eq(future_remove_done_callback(f, done_note, "a"), 0);
    run(loop);
    ck_assert_str_eq(ran, "a@1");
    future_release(f);
    finish(loop);
}
END_TEST

/* The loop holds the future while its callback is scheduled (future.h):
 * the caller may drop its reference at once. */
static void check_done(loop_t *loop, future_t *f, void *arg)
{
    (void)loop;
    (void)arg;
    label_add(future_done(f) ? "done" : "pending");
}

START_TEST(scheduled_callback_holds_the_future)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    future_add_done_callback(f, check_done, NULL);
    future_set_result(f, NULL);
    future_release(f);
    run(loop);
    ck_assert_str_eq(ran, "done");
    finish(loop);
}
END_TEST

/* ---- repr ------------------------------------------------------------------- */

/* base_futures.py _future_repr_info and format_helpers: the state in
 * lower case, "result=" or "exception=" as repr() prints them, the
 * callbacks "cb=[a(), <2 more>, d()]" (_format_callbacks).  Python:
 *     f = loop.create_future(); repr(f)           '<Future pending>'
 *     f.set_result(None)                          '<Future finished result=None>'
 *     f.set_exception(RuntimeError('x'))          "<Future finished exception=RuntimeError('x')>"
 *     f.set_exception(RuntimeError())             '<Future finished exception=RuntimeError()>'
 *     f.set_exception(RuntimeError("it's"))       '<Future finished exception=RuntimeError("it\'s")>'
 *     f.cancel()                                  '<Future cancelled>'   */
START_TEST(repr_strings)
{
    loop_t *loop = virtual_loop();
    loop_set_namer(loop, namer);
    char buf[256];
    future_t *f = loop_create_future(loop);
    ck_assert_str_eq(future_repr(f, buf, sizeof buf), "<Future pending>");
    future_add_done_callback(f, done_note, "a");
    ck_assert_str_eq(future_repr(f, buf, sizeof buf), "<Future pending cb=[a()]>");
    future_add_done_callback(f, done_note, "b");
    ck_assert_str_eq(future_repr(f, buf, sizeof buf), "<Future pending cb=[a(), b()]>");
    future_add_done_callback(f, done_note, "c");
    ck_assert_str_eq(future_repr(f, buf, sizeof buf), "<Future pending cb=[a(), <1 more>, c()]>");
    future_add_done_callback(f, done_note, "d");
    ck_assert_str_eq(future_repr(f, buf, sizeof buf), "<Future pending cb=[a(), <2 more>, d()]>");
    future_set_result(f, NULL);
    ck_assert_str_eq(future_repr(f, buf, sizeof buf), "<Future finished result=None>");

    future_t *g = loop_create_future(loop);
    future_fail(g, NULL, "x");
    ck_assert_str_eq(future_repr(g, buf, sizeof buf),
                     "<Future finished exception=RuntimeError('x')>");
    future_t *h = loop_create_future(loop);
    future_fail(h, NULL, "%s", "");
    ck_assert_str_eq(future_repr(h, buf, sizeof buf), "<Future finished exception=RuntimeError()>");
    future_t *q = loop_create_future(loop);
    future_fail(q, "ValueError", "it's");
    ck_assert_str_eq(future_repr(q, buf, sizeof buf),
                     "<Future finished exception=ValueError(\"it's\")>");
    future_t *c = loop_create_future(loop);
    future_cancel(c, "m");
    ck_assert_str_eq(future_repr(c, buf, sizeof buf), "<Future cancelled>");
    future_t *all[] = {f, g, h, q, c};
    for (size_t i = 0; i < 5; i++) {
        future_exception(all[i], NULL);
        future_release(all[i]);
    }
    run(loop);
    finish(loop);
}
END_TEST

/* ---- "exception was never retrieved" ---------------------------------------- */

/* futures.py __del__:
 *     if not self.__log_traceback: return
 *     context = {'message': f'{self.__class__.__name__} exception was never retrieved',
 *                'exception': exc, 'future': self}
 *     self._loop.call_exception_handler(context)
 * printed by the default handler as the message, "future: <repr>", then
 * the error's line. */
START_TEST(never_retrieved_reported_on_last_release)
{
    loop_t *loop = logged_loop();
    future_t *f = loop_create_future(loop);
    future_fail(f, NULL, "lost");
    future_retain(f);
    future_release(f);
    ck_assert_str_eq(log_text(), ""); /* not the last reference */
    future_release(f);
    ck_assert_str_eq(log_text(), "Future exception was never retrieved\n"
                                 "future: <Future finished exception=RuntimeError('lost')>\n"
                                 "RuntimeError: lost\n");
    logged_finish(loop);
}
END_TEST

/* result() and exception() both clear __log_traceback, and so does
 * cancel() -- even on a done future: futures.py cancel() sets
 * `self.__log_traceback = False` before `if self._state != _PENDING:
 * return False`. */
START_TEST(retrieved_or_cancelled_not_reported)
{
    loop_t *loop = logged_loop();
    future_t *f = loop_create_future(loop);
    future_fail(f, NULL, "by result");
    error_of(f);
    future_release(f);
    future_t *g = loop_create_future(loop);
    future_fail(g, NULL, "by exception");
    future_exception(g, NULL);
    future_release(g);
    future_t *h = loop_create_future(loop);
    future_fail(h, NULL, "by cancel");
    ck_assert_int_eq(future_cancel(h, NULL), 0);
    future_release(h);
    future_t *c = loop_create_future(loop); /* cancelled, never asked */
    future_cancel(c, "m");
    future_release(c);
    future_t *r = loop_create_future(loop); /* a result, never asked */
    future_set_result(r, NULL);
    future_release(r);
    ck_assert_str_eq(log_text(), "");
    logged_finish(loop);
}
END_TEST

static const future_t *handler_future;
static char handler_seen[256];

static void keep_context(loop_t *loop, const loop_context_t *context, void *ctx)
{
    (void)loop;
    (void)ctx;
    handler_future = context->future;
    snprintf(handler_seen, sizeof handler_seen, "%s | %s: %s | task=%s", context->message,
             context->exception != NULL ? context->exception->type : "-",
             context->exception != NULL ? context->exception->message : "-",
             context->task != NULL ? "yes" : "no");
}

/* The context a custom handler gets: message, exception, future. */
START_TEST(never_retrieved_context)
{
    loop_t *loop = virtual_loop();
    loop_set_exception_handler(loop, keep_context, NULL);
    future_t *f = loop_create_future(loop);
    future_fail(f, "ValueError", "v");
    handler_future = NULL;
    future_release(f);
    ck_assert_ptr_eq(handler_future, f);
    ck_assert_str_eq(handler_seen, "Future exception was never retrieved | ValueError: v | task=no");
    finish(loop);
}
END_TEST

/* ---- NULL, a closed loop, a freed loop ------------------------------------- */

START_TEST(null_arguments)
{
    loop_t *loop = virtual_loop();
    errno = 0;
    ck_assert_ptr_null(loop_create_future(NULL));
    ck_assert_int_eq(errno, EINVAL);
    future_retain(NULL);
    future_release(NULL);
    ck_assert_int_eq(future_done(NULL), 0);
    ck_assert_int_eq(future_cancelled(NULL), 0);
    ck_assert_ptr_null(future_get_loop(NULL));
    errno = 0;
    ck_assert_int_eq(future_set_result(NULL, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_int_eq(future_cancel(NULL, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    loop_exception_t e;
    ck_assert_int_eq(future_result(NULL, NULL, &e), -1);
    ck_assert_int_eq(future_exception(NULL, &e), -1);
    ck_assert_uint_eq(future_remove_done_callback(NULL, done_note, NULL), 0);
    errno = 0;
    ck_assert_int_eq(future_add_done_callback(NULL, done_note, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);

    future_t *f = loop_create_future(loop);
    errno = 0;
    ck_assert_int_eq(future_add_done_callback(f, NULL, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_int_eq(future_set_exception(f, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(future_get_state(f), FUTURE_PENDING);
    ck_assert_int_eq(future_set_result(f, NULL), 0);
    ck_assert_int_eq(future_result(f, NULL, NULL), 0); /* NULL out-pointers: fine */
    errno = 0;
    ck_assert_ptr_null(loop_gather(NULL, NULL, 0, 0));
    ck_assert_int_eq(errno, EINVAL);
    future_t *kids[] = {f, NULL};
    errno = 0;
    ck_assert_ptr_null(loop_gather(loop, kids, 2, 0));
    ck_assert_int_eq(errno, EINVAL);
    future_release(f);
    finish(loop);
}
END_TEST

/* A closed loop: a future whose callbacks would need call_soon cannot
 * complete (base_events.py call_soon: _check_closed, "Event loop is
 * closed"); one without callbacks needs no loop and completes, as in
 * CPython. */
START_TEST(closed_loop)
{
    loop_t *loop = virtual_loop();
    future_t *quiet = loop_create_future(loop);
    future_t *busy = loop_create_future(loop);
    future_add_done_callback(busy, done_note, "never");
    future_t *done = loop_create_future(loop);
    future_set_result(done, NULL);
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert_int_eq(future_set_result(quiet, NULL), 0);
    errno = 0;
    ck_assert_int_eq(future_set_result(busy, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "Event loop is closed");
    errno = 0;
    ck_assert_int_eq(future_add_done_callback(done, done_note, "never"), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "Event loop is closed");
    ck_assert_int_eq(nran, 0);
    future_release(quiet);
    future_release(busy);
    future_release(done);
    loop_free(loop);
}
END_TEST

/* A future the program still holds when its loop is freed is detached
 * (future.h, future.c futures_loop_free): getters and release work, every
 * other call refuses it -- no use after free (ASan, valgrind). */
START_TEST(future_outlives_its_loop)
{
    loop_t *loop = virtual_loop();
    future_t *f = loop_create_future(loop);
    future_add_done_callback(f, done_note, "never");
    finish(loop);
    ck_assert_ptr_null(future_get_loop(f));
    ck_assert_int_eq(future_get_state(f), FUTURE_PENDING);
    errno = 0;
    ck_assert_int_eq(future_set_result(f, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(future_cancel(f, NULL), -1);
    ck_assert_int_eq(future_add_done_callback(f, done_note, "never"), -1);
    future_release(f);
    ck_assert_int_eq(nran, 0);
}
END_TEST

/* ---- gather ------------------------------------------------------------------ */

static const gather_result_t *gathered(future_t *g)
{
    void *value = NULL;
    loop_exception_t e;
    ck_assert_msg(future_result(g, &value, &e) == 0, "gather failed: %s: %s", e.type, e.message);
    ck_assert_ptr_nonnull(value);
    return value;
}

static void set_value(loop_t *loop, void *arg)
{
    (void)loop;
    future_t *f = arg;
    label_add_at("set", ticks);
    ck_assert_int_eq(future_set_result(f, f), 0); /* its own address: easy to check */
}

/* tasks.py gather(): results in the order of the arguments, whatever the
 * order the children finish in; outer is set by the last child's
 * _done_callback (one tick after that child), and outer's own callbacks
 * run one tick later still.
 *     a, b, c = futures; g = gather(a, b, c); g.add_done_callback(note)
 *     loop.call_soon(c.set_result, 'c'); loop.call_soon(a.set_result, 'a')
 *     loop.call_soon(b.set_result, 'b')       -> set at tick 1, note at tick 3 */
START_TEST(gather_results_in_argument_order)
{
    loop_t *loop = virtual_loop();
    future_t *kids[3];
    for (int i = 0; i < 3; i++)
        kids[i] = loop_create_future(loop);
    future_t *g = loop_gather(loop, kids, 3, 0);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(future_done(g), 0);
    future_add_done_callback(g, done_note, "gathered");
    loop_call_soon(loop, set_value, kids[2]);
    loop_call_soon(loop, set_value, kids[0]);
    loop_call_soon(loop, set_value, kids[1]);
    run(loop);
    ck_assert_str_eq(ran, "set@1 set@1 set@1 gathered@3");
    const gather_result_t *r = gathered(g);
    ck_assert_uint_eq(r->n, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(r->items[i].failed, 0);
        ck_assert_ptr_eq(r->items[i].value, kids[i]);
    }
    for (int i = 0; i < 3; i++)
        future_release(kids[i]);
    future_release(g);
    finish(loop);
}
END_TEST

static void fail_value(loop_t *loop, void *arg)
{
    (void)loop;
    ck_assert_int_eq(future_fail(arg, "ValueError", "%p", arg), 0);
}

/* Without return_exceptions, the first child to fail finishes outer with
 * its error at once (`outer.set_exception(exc)`); the others run on, and
 * a child failing after outer is done is marked retrieved
 * (`if outer is None or outer.done(): if not fut.cancelled():
 * fut.exception()`): no "never retrieved" for it. */
START_TEST(gather_first_error_wins)
{
    loop_t *loop = logged_loop();
    future_t *kids[3];
    for (int i = 0; i < 3; i++)
        kids[i] = loop_create_future(loop);
    future_t *g = loop_gather(loop, kids, 3, 0);
    loop_call_soon(loop, fail_value, kids[1]);
    run(loop);
    ck_assert_int_eq(future_done(g), 1);
    ck_assert_int_eq(future_cancelled(g), 0);
    char want[64];
    snprintf(want, sizeof want, "ValueError: %p", (void *)kids[1]);
    ck_assert_str_eq(error_of(g), want);
    ck_assert_int_eq(future_done(kids[0]), 0); /* not cancelled: they run on */
    ck_assert_int_eq(future_done(kids[2]), 0);
    loop_call_soon(loop, fail_value, kids[2]); /* after outer is done */
    loop_call_soon(loop, set_value, kids[0]);
    run(loop);
    for (int i = 0; i < 3; i++)
        future_release(kids[i]);
    future_release(g);
    ck_assert_str_eq(log_text(), ""); /* kids[1] retrieved through g, kids[2] by the callback */
    logged_finish(loop);
}
END_TEST

/* The outer future's error is retrieved through outer: the child's own
 * __log_traceback was cleared by _done_callback's fut.exception(). An
 * outer nobody asks is reported, as a future (class _GatheringFuture). */
START_TEST(gather_unretrieved_outer_reported)
{
    loop_t *loop = logged_loop();
    future_t *kid = loop_create_future(loop);
    future_t *g = loop_gather(loop, &kid, 1, 0);
    future_fail(kid, NULL, "lost");
    run(loop);
    future_release(kid);
    ck_assert_str_eq(log_text(), "");
    future_release(g);
    ck_assert_str_eq(log_text(), "_GatheringFuture exception was never retrieved\n"
                                 "future: <_GatheringFuture finished exception=RuntimeError('lost')>\n"
                                 "RuntimeError: lost\n");
    logged_finish(loop);
}
END_TEST

/* A cancelled child without return_exceptions: outer is FINISHED (not
 * cancelled) with the child's CancelledError, and the other children run
 * on.  Python 3.11:
 *     a, b = futures; g = gather(a, b); a.cancel("m"); await sleep(0)
 *     g.done(), g.cancelled(), g.exception(), b.cancelled()
 *     -> True False CancelledError('m') False */
START_TEST(gather_cancelled_child)
{
    loop_t *loop = virtual_loop();
    future_t *kids[2] = {loop_create_future(loop), loop_create_future(loop)};
    future_t *g = loop_gather(loop, kids, 2, 0);
    future_cancel(kids[0], "m");
    run(loop);
    ck_assert_int_eq(future_get_state(g), FUTURE_FINISHED);
    ck_assert_str_eq(error_of(g), "CancelledError: m");
    ck_assert_int_eq(future_cancelled(kids[1]), 0);
    future_release(kids[0]);
    future_release(kids[1]);
    future_release(g);
    finish(loop);
}
END_TEST

/* return_exceptions=True: every child's outcome in the list.  Python:
 *     g = gather(a, b, c, return_exceptions=True)
 *     a.cancel("m"); b.set_exception(RuntimeError("x")); c.set_result(...)
 *     -> [CancelledError('m'), RuntimeError('x'), ...] */
START_TEST(gather_return_exceptions)
{
    loop_t *loop = logged_loop();
    future_t *kids[3];
    for (int i = 0; i < 3; i++)
        kids[i] = loop_create_future(loop);
    future_t *g = loop_gather(loop, kids, 3, 1);
    future_cancel(kids[0], "m");
    future_fail(kids[1], NULL, "x");
    future_set_result(kids[2], kids[2]);
    run(loop);
    const gather_result_t *r = gathered(g);
    ck_assert_uint_eq(r->n, 3);
    ck_assert_int_eq(r->items[0].failed, 1);
    ck_assert_str_eq(r->items[0].error.type, "CancelledError");
    ck_assert_str_eq(r->items[0].error.message, "m");
    ck_assert_int_eq(r->items[1].failed, 1);
    ck_assert_str_eq(r->items[1].error.type, "RuntimeError");
    ck_assert_str_eq(r->items[1].error.message, "x");
    ck_assert_int_eq(r->items[2].failed, 0);
    ck_assert_ptr_eq(r->items[2].value, kids[2]);
    for (int i = 0; i < 3; i++)
        future_release(kids[i]);
    future_release(g);
    ck_assert_str_eq(log_text(), ""); /* kids[1]'s error was retrieved into the list */
    logged_finish(loop);
}
END_TEST

/* The same future twice: one child (arg_to_fut), listed twice.
 *     a = loop.create_future(); g = gather(a, a); a.set_result(5) -> [5, 5] */
START_TEST(gather_same_child_twice)
{
    loop_t *loop = virtual_loop();
    future_t *a = loop_create_future(loop), *b = loop_create_future(loop);
    future_t *kids[] = {a, b, a};
    future_t *g = loop_gather(loop, kids, 3, 0);
    future_set_result(a, a);
    run(loop);
    ck_assert_int_eq(future_done(g), 0); /* b still pending: a counts once */
    future_set_result(b, b);
    run(loop);
    const gather_result_t *r = gathered(g);
    ck_assert_uint_eq(r->n, 3);
    ck_assert_ptr_eq(r->items[0].value, a);
    ck_assert_ptr_eq(r->items[1].value, b);
    ck_assert_ptr_eq(r->items[2].value, a);
    future_release(a);
    future_release(b);
    future_release(g);
    finish(loop);
}
END_TEST

/* No child: `outer = loop.create_future(); outer.set_result([])` -- done
 * at once, a plain Future.  repr: '<Future finished result=[]>'. */
START_TEST(gather_no_child)
{
    loop_t *loop = virtual_loop();
    future_t *g = loop_gather(loop, NULL, 0, 0);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(future_done(g), 1);
    ck_assert_uint_eq(gathered(g)->n, 0);
    char buf[128];
    ck_assert_str_eq(future_repr(g, buf, sizeof buf), "<Future finished result=[]>");
    future_release(g);
    finish(loop);
}
END_TEST

/* _GatheringFuture.cancel(): cancels every child; True if any was.  Then
 * outer does not become CANCELLED: the children's callbacks finish it
 * with set_exception(CancelledError).  Python 3.11, both ways:
 *     g = gather(a, b[, return_exceptions=True]); g.cancel("why")
 *     -> True, a.cancelled() True, b.cancelled() True, g.done() False
 *     await sleep(0): g.done() True, g.cancelled() False,
 *     g.exception() CancelledError('why') */
START_TEST(gather_cancel_cancels_children)
{
    for (int rex = 0; rex <= 1; rex++) {
        loop_t *loop = virtual_loop();
        future_t *kids[2] = {loop_create_future(loop), loop_create_future(loop)};
        future_t *g = loop_gather(loop, kids, 2, rex);
        ck_assert_int_eq(future_cancel(g, "why"), 1);
        ck_assert_int_eq(future_cancelled(kids[0]), 1);
        ck_assert_int_eq(future_cancelled(kids[1]), 1);
        ck_assert_int_eq(future_done(g), 0);
        run(loop);
        ck_assert_int_eq(future_get_state(g), FUTURE_FINISHED);
        ck_assert_int_eq(future_cancelled(g), 0);
        ck_assert_str_eq(error_of(g), "CancelledError: why");
        ck_assert_int_eq(future_cancel(g, NULL), 0); /* done: False */
        future_release(kids[0]);
        future_release(kids[1]);
        future_release(g);
        finish(loop);
    }
}
END_TEST

/* Every child already done: _GatheringFuture.cancel() returns False
 * (no child.cancel() returned True), and outer finishes normally. */
START_TEST(gather_cancel_with_children_done)
{
    loop_t *loop = virtual_loop();
    future_t *kids[2] = {loop_create_future(loop), loop_create_future(loop)};
    future_t *g = loop_gather(loop, kids, 2, 0);
    future_set_result(kids[0], NULL);
    future_set_result(kids[1], NULL);
    ck_assert_int_eq(future_cancel(g, NULL), 0);
    run(loop);
    ck_assert_uint_eq(gathered(g)->n, 2);
    future_release(kids[0]);
    future_release(kids[1]);
    future_release(g);
    finish(loop);
}
END_TEST

/* repr() of a finished gather: the result list as Python prints it.  A
 * cancelled child's entry is built as `exceptions.CancelledError('' if
 * fut._cancel_message is None else fut._cancel_message)`: with no message
 * it still has one argument, '' -- CancelledError(''), not
 * CancelledError().  Python 3.11:
 *     g = gather(a, b, c, d, return_exceptions=True)
 *     a.set_result(None); b.set_exception(RuntimeError("x")); c.cancel(); d.cancel("m")
 *     -> <_GatheringFuture finished result=[None, RuntimeError('x'),
 *        CancelledError(''), CancelledError('m')]>
 *     gather(a, a) -> <_GatheringFuture finished result=[None, None]> */
START_TEST(gather_repr)
{
    loop_t *loop = virtual_loop();
    future_t *kids[4];
    for (int i = 0; i < 4; i++)
        kids[i] = loop_create_future(loop);
    future_t *g = loop_gather(loop, kids, 4, 1);
    future_t *twice[2] = {kids[0], kids[0]};
    future_t *g2 = loop_gather(loop, twice, 2, 0);
    future_set_result(kids[0], NULL);
    future_fail(kids[1], NULL, "x");
    future_cancel(kids[2], NULL);
    future_cancel(kids[3], "m");
    run(loop);
    char buf[256];
    ck_assert_str_eq(future_repr(g2, buf, sizeof buf),
                     "<_GatheringFuture finished result=[None, None]>");
    ck_assert_str_eq(future_repr(g, buf, sizeof buf),
                     "<_GatheringFuture finished result=[None, RuntimeError('x'), "
                     "CancelledError(''), CancelledError('m')]>");
    for (int i = 0; i < 4; i++)
        future_release(kids[i]);
    future_release(g);
    future_release(g2);
    finish(loop);
}
END_TEST

/* gather holds its children: the caller may release them at once. */
START_TEST(gather_holds_its_children)
{
    loop_t *loop = virtual_loop();
    future_t *kids[2] = {loop_create_future(loop), loop_create_future(loop)};
    future_t *g = loop_gather(loop, kids, 2, 0);
    future_set_result(kids[0], NULL);
    loop_call_soon(loop, set_value, kids[1]);
    future_release(kids[0]);
    future_release(kids[1]);
    run(loop);
    const gather_result_t *r = gathered(g);
    ck_assert_ptr_null(r->items[0].value);
    ck_assert_ptr_nonnull(r->items[1].value);
    future_release(g);
    finish(loop);
}
END_TEST

static Suite *future_suite(void)
{
    Suite *s = suite_create("future");
    TCase *tc = tcase_create("states");
    tcase_add_test(tc, new_future_is_pending);
    tcase_add_test(tc, pending_result_and_exception_refused);
    tcase_add_test(tc, set_result_then_result);
    tcase_add_test(tc, done_future_refuses_everything);
    tcase_add_test(tc, set_exception_then_result_raises);
    tcase_add_test(tc, stop_iteration_refused);
    tcase_add_test(tc, cancelled_future_raises_cancelled_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("callbacks");
    tcase_add_test(tc, callbacks_scheduled_in_order_one_tick_later);
    tcase_add_test(tc, callbacks_run_the_tick_after);
    tcase_add_test(tc, add_to_done_future_schedules_at_once);
    tcase_add_test(tc, remove_done_callback_removes_all_equal);
    tcase_add_test(tc, remove_after_done_removes_nothing);
    tcase_add_test(tc, scheduled_callback_holds_the_future);
    suite_add_tcase(s, tc);
    tc = tcase_create("repr");
    tcase_add_test(tc, repr_strings);
    suite_add_tcase(s, tc);
    tc = tcase_create("never_retrieved");
    tcase_add_test(tc, never_retrieved_reported_on_last_release);
    tcase_add_test(tc, retrieved_or_cancelled_not_reported);
    tcase_add_test(tc, never_retrieved_context);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_add_test(tc, null_arguments);
    tcase_add_test(tc, closed_loop);
    tcase_add_test(tc, future_outlives_its_loop);
    suite_add_tcase(s, tc);
    tc = tcase_create("gather");
    tcase_add_test(tc, gather_results_in_argument_order);
    tcase_add_test(tc, gather_first_error_wins);
    tcase_add_test(tc, gather_unretrieved_outer_reported);
    tcase_add_test(tc, gather_cancelled_child);
    tcase_add_test(tc, gather_return_exceptions);
    tcase_add_test(tc, gather_same_child_twice);
    tcase_add_test(tc, gather_no_child);
    tcase_add_test(tc, gather_cancel_cancels_children);
    tcase_add_test(tc, gather_cancel_with_children_done);
    tcase_add_test(tc, gather_holds_its_children);
    tcase_add_test(tc, gather_repr);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(future_suite());
}
