/* handler.c -- chapter 08: failing callbacks, the exception handler, debug
 * mode's names for handles.  See handler.h.
 *
 * The order of events is Handle._run's and call_exception_handler's
 * (Lib/asyncio/events.py, base_events.py):
 *   callback returns, error indicator set
 *     -> KeyboardInterrupt / SystemExit: escape (run_forever returns)
 *     -> else context {message, exception, handle} -> the handler
 *          custom handler fails -> the default handler, with
 *              {message 'Unhandled error in exception handler',
 *               exception, context}
 */
#define _POSIX_C_SOURCE 200809L
#include "future_private.h" /* chapter 09: tasks in the messages */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @region raise */
int loop_raise(loop_t *loop, const char *type, const char *fmt, ...)
{
    loop_errors_t *e = loop_errors(loop);
    if (e->current == NULL && !e->in_handler) {
        errno = EINVAL;
        return -1;
    }
    snprintf(e->exception.type, sizeof e->exception.type, "%s",
             type != NULL ? type : "RuntimeError");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->exception.message, sizeof e->exception.message, fmt, ap);
    va_end(ap);
    e->raised = true;
    return 0;
}

static bool escapes(const loop_exception_t *exc)
{
    return strcmp(exc->type, LOOP_KEYBOARD_INTERRUPT) == 0 ||
           strcmp(exc->type, LOOP_SYSTEM_EXIT) == 0;
}
/* @end raise */

/* @region names */
void loop_set_namer(loop_t *loop, loop_namer namer)
{
    loop_errors(loop)->namer = namer;
}

/* A callback's name, as format_helpers._format_callback_source prints it:
 * "tick()" for a Python function; "None()" once cancel() dropped it. */
static void callback_name(loop_t *loop, const handle_info_t *info, bool keep, char *buf,
                          size_t size)
{
    loop_namer namer = loop_errors(loop)->namer;
    if (info->cancelled && !keep)
        snprintf(buf, size, "None()");
    else if (namer != NULL)
        namer(info->callback, info->arg, buf, size);
    else
        snprintf(buf, size, "callback(%p)", info->arg);
}

/* A double as Python's repr() writes it: the shortest digits that read
 * back as the same double, "1.0" not "1", exponent only below 1e-4 or
 * from 1e16 on. */
static void py_float(double x, char *buf, size_t size)
{
    int p = 1;
    char tmp[40];
    for (; p < 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
        if (strtod(tmp, NULL) == x)
            break;
    }
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
    int exp10 = atoi(strchr(tmp, 'e') + 1);
    if (x == 0 || (exp10 >= -4 && exp10 < 16)) {
        int decimals = p - 1 - exp10;
        snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, x);
        if (strchr(buf, '.') == NULL && strlen(buf) + 2 < size)
            strcat(buf, ".0");
    } else {
        /* mantissa digits as %e gives them; exponent at least two digits */
        char *e = strchr(tmp, 'e');
        *e = '\0';
        int mag = exp10 < 0 ? -exp10 : exp10; /* at most 324 */
        snprintf(buf, size, "%.24se%c%02d", tmp, exp10 < 0 ? '-' : '+', mag % 1000);
    }
}

char *handle_repr(const handle_t *handle, char *buf, size_t size)
{
    handle_info_t info;
    handle_info(handle, &info);
    char when[96] = "", name[128] = "";
    if (info.timer) {
        char num[64];
        py_float(info.when, num, sizeof num);
        snprintf(when, sizeof when, " when=%s", num);
    }
    if (!info.cancelled || info.named) {
        callback_name(info.loop, &info, true, name + 1, sizeof name - 1);
        name[0] = ' ';
    }
    snprintf(buf, size, "<%s%s%s%s>", info.timer ? "TimerHandle" : "Handle",
             info.cancelled ? " cancelled" : "", when, name);
    return buf;
}
/* @end names */

/* @region default */
void loop_set_log(loop_t *loop, FILE *log)
{
    loop_errors(loop)->log = log;
}

static FILE *log_of(loop_t *loop)
{
    FILE *log = loop_errors(loop)->log;
    return log != NULL ? log : stderr;
}

/* Python's repr() of a string without quotes in it: 'text'. */
static void put_repr_str(FILE *f, const char *s)
{
    char q = strchr(s, '\'') != NULL && strchr(s, '"') == NULL ? '"' : '\'';
    fputc(q, f);
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == q)
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc(q, f);
}

/* repr() of a context dict, keys in the order Handle._run inserts them. */
static void put_repr_context(loop_t *loop, FILE *f, const loop_context_t *c)
{
    const char *sep = "";
    fputc('{', f);
    if (c->message != NULL) {
        fputs("'message': ", f);
        put_repr_str(f, c->message);
        sep = ", ";
    }
    if (c->exception != NULL) {
        fprintf(f, "%s'exception': %s(", sep, c->exception->type);
        if (c->exception->message[0] != '\0') /* TimeoutError(), as repr() has it */
            put_repr_str(f, c->exception->message);
        fputc(')', f);
        sep = ", ";
    }
    if (c->future != NULL) {
        char buf[512];
        fprintf(f, "%s'future': %s", sep, future_repr(c->future, buf, sizeof buf));
        sep = ", ";
    }
    if (c->handle != NULL) {
        char buf[256];
        fprintf(f, "%s'handle': %s", sep, handle_repr(c->handle, buf, sizeof buf));
        sep = ", ";
    }
    if (c->task != NULL) {
        char buf[512];
        fprintf(f, "%s'task': %s", sep, task_repr(c->task, buf, sizeof buf));
        sep = ", ";
    }
    if (c->context != NULL) {
        fprintf(f, "%s'context': ", sep);
        put_repr_context(loop, f, c->context);
    }
    fputc('}', f);
}

/* default_exception_handler: the message, the other keys sorted (context,
 * future, handle, task), then the error where Python prints its
 * traceback: "TYPE: MESSAGE", or "TYPE" alone for an empty message, as
 * traceback.format_exception_only writes TimeoutError(). */
void loop_default_exception_handler(loop_t *loop, const loop_context_t *context)
{
    FILE *f = log_of(loop);
    const char *message = context->message;
    fputs(message != NULL && *message != '\0' ? message : "Unhandled exception in event loop", f);
    fputc('\n', f);
    if (context->context != NULL) {
        fputs("context: ", f);
        put_repr_context(loop, f, context->context);
        fputc('\n', f);
    }
    if (context->future != NULL) {
        char buf[512];
        fprintf(f, "future: %s\n", future_repr(context->future, buf, sizeof buf));
    }
    if (context->handle != NULL) {
        char buf[256];
        fprintf(f, "handle: %s\n", handle_repr(context->handle, buf, sizeof buf));
    }
    if (context->task != NULL) {
        char buf[512];
        fprintf(f, "task: %s\n", task_repr(context->task, buf, sizeof buf));
    }
    if (context->exception != NULL && context->exception->message[0] == '\0')
        fprintf(f, "%s\n", context->exception->type);
    else if (context->exception != NULL)
        fprintf(f, "%s: %s\n", context->exception->type, context->exception->message);
    fflush(f);
}
/* @end default */

/* @region call */
void loop_set_exception_handler(loop_t *loop, loop_exception_handler handler, void *ctx)
{
    loop_errors_t *e = loop_errors(loop);
    e->handler = handler;
    e->handler_ctx = handler != NULL ? ctx : NULL;
}

loop_exception_handler loop_get_exception_handler(const loop_t *loop, void **ctx)
{
    loop_errors_t *e = loop_errors((loop_t *)loop);
    if (ctx != NULL)
        *ctx = e->handler_ctx;
    return e->handler;
}

void loop_call_exception_handler(loop_t *loop, const loop_context_t *context)
{
    loop_errors_t *e = loop_errors(loop);
    if (e->handler == NULL) {
        loop_default_exception_handler(loop, context);
        return;
    }
    /* The handler may fail as a callback does: its own error indicator,
     * saved and restored around it (it may be called from a callback that
     * has not failed, or failed already: the callback's error is in
     * `context`, not in the indicator any more). */
    bool was_raised = e->raised, was_in = e->in_handler;
    loop_exception_t was = e->exception;
    e->raised = false;
    e->in_handler = true;
    e->handler(loop, context, e->handler_ctx);
    e->in_handler = was_in;
    if (e->raised) {
        loop_exception_t exc = e->exception;
        if (escapes(&exc))
            return; /* leave it raised: it goes up through the callback */
        e->raised = was_raised;
        e->exception = was;
        loop_context_t unhandled = {.message = "Unhandled error in exception handler",
                                    .exception = &exc, .context = context};
        loop_default_exception_handler(loop, &unhandled);
        return;
    }
    e->raised = was_raised;
    e->exception = was;
}
/* @end call */

/* @region run */
/* Handle._run's `except` clause, after the callback has returned. */
static int after_callback(loop_t *loop, const handle_t *handle)
{
    loop_errors_t *e = loop_errors(loop);
    if (!e->raised)
        return 0;
    loop_exception_t exc = e->exception;
    e->raised = false;
    if (escapes(&exc)) { /* except (SystemExit, KeyboardInterrupt): raise */
        loop_fail(loop, EINTR, "%s: %s", exc.type, exc.message);
        return 1;
    }
    handle_info_t info;
    handle_info(handle, &info);
    char name[128], message[160];
    callback_name(loop, &info, false, name, sizeof name);
    snprintf(message, sizeof message, "Exception in callback %s", name);
    loop_context_t context = {.message = message, .exception = &exc, .handle = handle};
    loop_call_exception_handler(loop, &context);
    if (e->raised && escapes(&e->exception)) { /* the handler raised one */
        e->raised = false;
        loop_fail(loop, EINTR, "%s: %s", e->exception.type, e->exception.message);
        return 1;
    }
    return 0;
}

/* Step 4's call of one handle: Handle._run, and in debug mode
 * _run_once's timing around it (the handler's time included, as there). */
int errors_run_handle(loop_t *loop, handle_t *handle, loop_callback callback, void *arg)
{
    loop_errors_t *e = loop_errors(loop);
    e->current = handle;
    e->raised = false;
    bool timed = e->debug; /* `if self._debug:` is read before the call */
    double t0 = timed ? loop_time(loop) : 0;
    callback(loop, arg);
    int escaped = after_callback(loop, handle);
    if (timed && !escaped) {
        double dt = loop_time(loop) - t0;
        if (dt >= e->slow_callback_duration) {
            /* _format_handle: a task's step or wakeup is named by the task */
            char buf[512];
            const task_t *task = task_of_callback(callback, arg);
            fprintf(log_of(loop), "Executing %s took %.3f seconds\n",
                    task != NULL ? task_repr(task, buf, sizeof buf)
                                 : handle_repr(handle, buf, sizeof buf), dt);
            fflush(log_of(loop));
        }
    }
    e->current = NULL;
    return escaped;
}
/* @end run */

/* @region debug */
/* asyncio's set_debug() on a running loop also sends
 * _set_coroutine_origin_tracking to the loop's thread, with
 * call_soon_threadsafe.  C has no coroutines to track (yet), but the call
 * is made all the same: it is one more callback and one more byte in the
 * self-pipe, and so a tick with timeout 0 -- traces match CPython's tick
 * for tick only with it. */
static void set_origin_tracking(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

void loop_set_debug(loop_t *loop, int enabled)
{
    loop_errors(loop)->debug = enabled != 0;
    if (loop_is_running(loop))
        loop_call_soon_threadsafe(loop, set_origin_tracking, NULL);
}

int loop_get_debug(const loop_t *loop)
{
    return loop_errors((loop_t *)loop)->debug;
}

int loop_set_slow_callback_duration(loop_t *loop, double seconds)
{
    if (!isfinite(seconds) || seconds < 0)
        return loop_fail(loop, EINVAL, "slow_callback_duration must be a finite number of "
                                       "seconds >= 0, not %g", seconds);
    loop_errors(loop)->slow_callback_duration = seconds;
    return 0;
}
/* @end debug */
