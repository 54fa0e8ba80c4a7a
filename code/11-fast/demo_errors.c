/* demo_errors.c -- chapter 08: what the loop does when a callback fails.
 *
 * Article 004, exercise 4 question 3: "while the _ready callbacks run, one
 * raises: what does the loop do?"  CPython's Handle._run catches it, hands
 * a context to the exception handler, and the loop carries on with the
 * next callback.  This program shows it four ways:
 *   1. the default handler (its lines are CPython's logger.error's);
 *   2. a custom handler;
 *   3. a handler that fails itself ("Unhandled error in exception handler");
 *   4. KeyboardInterrupt, which is not caught: run_forever returns, the
 *      loop is stopped but not closed, and the callbacks still queued run
 *      at the next run_forever.
 * The loop's log is stdout here, so that the pinned output shows it in
 * place; by default it is stderr.  Virtual clock: the same on every run.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <errno.h>
#include <stdio.h>

/* @region namer */
/* Name each callback by its arg, a string, as CPython names a function. */
static void namer(loop_callback callback, void *arg, char *buf, size_t size)
{
    (void)callback;
    snprintf(buf, size, "%s()", (const char *)arg);
}
/* @end namer */

static void ok(loop_t *loop, void *arg)
{
    printf("%.3f  %s ran\n", loop_time(loop), (const char *)arg);
}

/* @region failing */
static void divide(loop_t *loop, void *arg)
{
    int divisor = 0;
    printf("%.3f  %s ran\n", loop_time(loop), (const char *)arg);
    if (divisor == 0) {
        loop_raise(loop, "ZeroDivisionError", "division by zero");
        return; /* say it, then return: the loop does the rest */
    }
}
/* @end failing */

static void interrupted(loop_t *loop, void *arg)
{
    printf("%.3f  %s ran\n", loop_time(loop), (const char *)arg);
    loop_raise(loop, LOOP_KEYBOARD_INTERRUPT, "%s", "Ctrl-C");
}

/* @region custom */
static void my_handler(loop_t *loop, const loop_context_t *context, void *ctx)
{
    printf("%.3f  my handler: %s (%s: %s)\n", loop_time(loop), context->message,
           context->exception->type, context->exception->message);
    if (ctx != NULL)
        loop_raise(loop, "RuntimeError", "the handler itself failed");
}
/* @end custom */

/* Run until nothing is left to do: a wait with no timer stops the loop
 * instead of blocking (a wait with one jumps the clock, as by default). */
static double until_idle(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (timeout < 0)
        loop_stop(loop);
    else
        loop_set_time(loop, loop_time(loop) + timeout);
    return 0;
}

static void section(const char *title)
{
    printf("\n-- %s\n", title);
}

int main(void)
{
    loop_t *loop = loop_new_virtual();
    loop_set_log(loop, stdout);
    loop_set_namer(loop, namer);
    loop_set_wait_hook(loop, until_idle, NULL);

    /* @region run */
    section("1. the default exception handler");
    loop_call_soon(loop, ok, "a");
    loop_call_soon(loop, divide, "b");
    loop_call_later(loop, 0.5, divide, "c");
    loop_call_soon(loop, ok, "d");
    loop_call_later(loop, 1, ok, "e");
    printf("run_forever -> %d\n", loop_run_forever(loop));
    /* @end run */

    section("2. a custom handler");
    loop_set_exception_handler(loop, my_handler, NULL);
    loop_call_soon(loop, divide, "f");
    loop_call_soon(loop, ok, "g");
    printf("run_forever -> %d\n", loop_run_forever(loop));

    section("3. a handler that fails");
    loop_set_exception_handler(loop, my_handler, "fail");
    loop_call_soon(loop, divide, "h");
    loop_call_soon(loop, ok, "i");
    printf("run_forever -> %d\n", loop_run_forever(loop));
    loop_set_exception_handler(loop, NULL, NULL);

    /* @region escape */
    section("4. KeyboardInterrupt escapes run_forever");
    loop_call_soon(loop, ok, "j");
    loop_call_soon(loop, interrupted, "k");
    loop_call_soon(loop, ok, "l");
    loop_call_later(loop, 1, ok, "m");
    int rc = loop_run_forever(loop);
    printf("run_forever -> %d, errno %s, \"%s\"; state %s\n", rc,
           errno == EINTR ? "EINTR" : "?", loop_error(loop),
           loop_state_name(loop_get_state(loop)));
    printf("run_forever again -> %d\n", loop_run_forever(loop));
    /* @end escape */

    loop_close(loop);
    loop_free(loop);
    return 0;
}
