/* handler.h -- chapter 08: what the loop does when a callback fails.
 *
 * asyncio has exceptions, C does not.  A callback of this book returns
 * void, and its shape cannot change: every suite of chapters 01-07 still
 * runs against this stage.  So a callback that fails SAYS so, with
 * loop_raise(), and then returns -- exactly as a function of CPython's own
 * C API sets the error indicator (PyErr_SetString) and returns NULL.  When
 * the callback has returned, the loop looks at that indicator, as
 * Handle._run's `except` does: it builds a context (the message
 * "Exception in callback NAME", the error, the handle), hands it to the
 * exception handler, and carries on with the rest of the tick.  Nothing
 * jumps: no longjmp crosses the loop, ever.
 *
 * Two kinds of error escape instead, as KeyboardInterrupt and SystemExit
 * escape Handle._run: loop_run_forever() returns -1 (errno EINTR) right
 * after the callback, with the loop stopped but not closed; the handles
 * still in the ready deque run at the next loop_run_forever().
 *
 * Included by loop.h; nothing here is thread-safe (the loop's thread only).
 */
#ifndef HANDLER_H
#define HANDLER_H

#include <stdio.h>

/* @region exception */
/* What a failing callback reports: the kind of error, in the words
 * CPython's traceback would end with ("RuntimeError", "OSError", ...), and
 * a message.  Printed as "TYPE: MESSAGE", as traceback.format_exception_only
 * prints an exception. */
#define LOOP_EXCEPTION_MESSAGE_MAX 160
typedef struct loop_exception {
    char type[32];
    char message[LOOP_EXCEPTION_MESSAGE_MAX];
} loop_exception_t;

/* The two types that escape the loop instead of reaching the handler. */
#define LOOP_KEYBOARD_INTERRUPT "KeyboardInterrupt"
#define LOOP_SYSTEM_EXIT "SystemExit"

/* Called by a callback (or by an exception handler) that fails, just before
 * it returns: record the error; the loop acts on it when the callback has
 * returned.  type NULL means "RuntimeError".  A second call in the same
 * callback replaces the first (as a second raise would).  -1 with EINVAL
 * (and nothing recorded) when no callback of this loop is running: there
 * is nobody to report to -- return an error code instead. */
int loop_raise(loop_t *loop, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* @end exception */

/* @region context */
/* asyncio's context dict, with the keys this loop has.  NULL: absent. */
typedef struct loop_context {
    const char *message;                  /* 'message' (always) */
    const loop_exception_t *exception;    /* 'exception' */
    const handle_t *handle;               /* 'handle' */
    const struct loop_context *context;   /* 'context': the context a failing */
                                          /*   handler was given */
    const struct future *future;          /* 'future' (chapter 09): "exception */
                                          /*   was never retrieved" */
    const struct task *task;              /* 'task' (chapter 09): "Task was */
                                          /*   destroyed but it is pending!" */
} loop_context_t;

/* An exception handler: asyncio's handler(loop, context).  It may fail
 * with loop_raise(), as a callback may. */
typedef void (*loop_exception_handler)(loop_t *loop, const loop_context_t *context,
                                       void *ctx);

/* Install a handler (ctx is passed to it); NULL restores the default. */
void loop_set_exception_handler(loop_t *loop, loop_exception_handler handler, void *ctx);

/* The handler installed, or NULL if the default is in use (*ctx, if not
 * NULL, receives its ctx). */
loop_exception_handler loop_get_exception_handler(const loop_t *loop, void **ctx);

/* asyncio's call_exception_handler(): the installed handler, or the
 * default one.  A handler that fails is reported by the default handler
 * with the message "Unhandled error in exception handler", its error and
 * the context it was given; a handler that raises KeyboardInterrupt or
 * SystemExit makes the running loop_run_forever() return, as a callback
 * would. */
void loop_call_exception_handler(loop_t *loop, const loop_context_t *context);

/* asyncio's default_exception_handler(): print, as logger.error does,
 * the message ("Unhandled exception in event loop" if none), then each
 * other key of the context, sorted, one "key: value" a line, then the
 * error as "TYPE: MESSAGE" (where Python prints the traceback, which ends
 * with that line).  Written to the loop's log (stderr unless changed). */
void loop_default_exception_handler(loop_t *loop, const loop_context_t *context);

/* Where the default handler and debug mode write: stderr unless changed
 * (asyncio's logger has the same default).  NULL restores stderr. */
void loop_set_log(loop_t *loop, FILE *log);
/* @end context */

/* @region names */
/* How the loop names a callback in its messages: asyncio prints
 * "Exception in callback tick()" because a Python function knows its
 * name; a C function pointer does not.  The namer writes the name of
 * (callback, arg) into buf (size bytes, NUL-terminated); without one the
 * name is "callback(arg)" with both as addresses.  A cancelled handle has
 * no callback any more, as in CPython, whose cancel() drops it: it is
 * named "None()". */
typedef void (*loop_namer)(loop_callback callback, void *arg, char *buf, size_t size);
void loop_set_namer(loop_t *loop, loop_namer namer);

/* The handle as asyncio's repr() prints it: "<Handle tick()>",
 * "<TimerHandle when=1.5 tick()>", "<Handle cancelled>".  Returns buf. */
char *handle_repr(const handle_t *handle, char *buf, size_t size);
/* @end names */

/* @region debug */
/* Debug mode (asyncio's set_debug): the loop times every callback, and
 * one that runs for slow_callback_duration seconds or more (0.1 unless
 * changed) is reported on the log:
 *     Executing <TimerHandle when=1 blocker()> took 0.150 seconds
 * Off by default, as in asyncio without PYTHONASYNCIODEBUG. */
void loop_set_debug(loop_t *loop, int enabled);
int loop_get_debug(const loop_t *loop);
#define LOOP_SLOW_CALLBACK_DURATION 0.1
/* Refused (-1, EINVAL) for a NaN, infinite or negative duration. */
int loop_set_slow_callback_duration(loop_t *loop, double seconds);
/* @end debug */

#endif
