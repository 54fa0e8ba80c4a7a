/* future.h -- chapter 09: asyncio.Future, in C.
 *
 * A future is a box for a result that is not there yet: PENDING, then
 * FINISHED (a result or an error) or CANCELLED, once.  Whoever waits for
 * it adds a done callback; when the future completes, each callback is
 * scheduled with call_soon, in the order they were added (never called
 * at once: Future.__schedule_callbacks).  Every rule and message is
 * CPython 3.11's (Lib/asyncio/futures.py, and its C twin _asyncio.Future,
 * whose words the refusals use: "invalid state").
 *
 * Memory: a future is reference-counted.  loop_create_future() returns one
 * reference, the caller's; future_retain / future_release add and drop
 * one.  The loop holds one while a done callback of the future is
 * scheduled.  When the last reference goes and the future finished with
 * an error nobody retrieved (future_result / future_exception were never
 * called, and it was not cancelled), the loop's exception handler hears
 * "Future exception was never retrieved" (Task ... for a task), as
 * Future.__del__ reports it.
 *
 * A refused call returns -1 with errno set and a message in
 * loop_error(future_get_loop(f)).  The loop's thread only.
 */
#ifndef FUTURE_H
#define FUTURE_H

#include <stddef.h>

#include "loop.h"

typedef struct future future_t;

typedef enum future_state { FUTURE_PENDING, FUTURE_CANCELLED, FUTURE_FINISHED } future_state;

/* A done callback: fn(future) in asyncio; arg is what was passed along. */
typedef void (*future_callback)(loop_t *loop, future_t *future, void *arg);

/* loop.create_future(): a pending future, one reference (the caller's).
 * NULL with ENOMEM, or EINVAL for a NULL loop. */
future_t *loop_create_future(loop_t *loop);

void future_retain(future_t *f);  /* NULL is ignored */
void future_release(future_t *f); /* NULL is ignored */

loop_t *future_get_loop(const future_t *f);
future_state future_get_state(const future_t *f);
const char *future_state_name(future_state state); /* "PENDING", "CANCELLED", "FINISHED" */
int future_done(const future_t *f);      /* 1 if not pending */
int future_cancelled(const future_t *f); /* 1 if cancelled */

/* set_result(value): FINISHED with value (not owned: the future never
 * frees it).  -1 with EINVAL "invalid state" if the future is done,
 * ENOMEM (the future unchanged, pending) if its callbacks cannot be
 * scheduled, EINVAL "Event loop is closed" if it has callbacks and its
 * loop is closed (CPython changes the state first, then call_soon raises;
 * here nothing changes).  A future whose loop was freed is refused with
 * EINVAL and no message: there is no loop_error() left to write to. */
int future_set_result(future_t *f, void *value);

/* set_exception(error): FINISHED with a copy of *error.  Refused as
 * set_result, and (EINVAL, TypeError's words) for StopIteration, which
 * "interacts badly with generators and cannot be raised into a Future". */
int future_set_exception(future_t *f, const loop_exception_t *error);
/* The same, spelled as a raise: type NULL means "RuntimeError". */
int future_fail(future_t *f, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* cancel(msg): 1 if the future is now cancelled (its callbacks are
 * scheduled), 0 if it was already done.  msg may be NULL.  On a task this
 * is Task.cancel, and on gather()'s future _GatheringFuture.cancel: the
 * same call, their rules (task.h, gather below).  -1 with ENOMEM (nothing
 * changed) if the callbacks cannot be scheduled. */
int future_cancel(future_t *f, const char *msg);

/* result(): 0 and *value if it finished with a result; otherwise -1 and
 * *error says why, in CPython's words: the future's error (FINISHED),
 * CancelledError with the cancel message (CANCELLED), InvalidStateError
 * "Result is not set." (PENDING).  Marks the error as retrieved. */
int future_result(future_t *f, void **value, loop_exception_t *error);

/* exception(): 1 and *error if it finished with an error, 0 if it
 * finished with a result; -1 with *error CancelledError (CANCELLED) or
 * InvalidStateError "Exception is not set." (PENDING).  Marks it retrieved. */
int future_exception(future_t *f, loop_exception_t *error);

/* add_done_callback(fn): fn runs (through call_soon) when the future is
 * done; at once scheduled if it is done already.  -1 with EINVAL (NULL),
 * ENOMEM. */
int future_add_done_callback(future_t *f, future_callback fn, void *arg);

/* remove_done_callback(fn): remove every (fn, arg) not yet scheduled;
 * the number removed. */
size_t future_remove_done_callback(future_t *f, future_callback fn, void *arg);

/* repr(future), as asyncio prints it: "<Future pending>",
 * "<Future finished result=...>" (C cannot know what a void * result
 * holds), "<Future finished
 * exception=RuntimeError('x')>", "<Future cancelled>"; a task prints as
 * Task's repr (task.h).  buf is returned. */
char *future_repr(const future_t *f, char *buf, size_t size);

/* @region gather */
/* asyncio.gather(*children, return_exceptions=...): a future that
 * finishes when they all have, with their outcomes in argument order (a
 * gather_result_t the gather future owns: valid while you hold the future).
 * Without return_exceptions, the first child that fails or is cancelled
 * finishes it with that error at once.  Cancelling it cancels the
 * children.  The same future twice is one child, listed twice.  n == 0:
 * a future already finished with an empty list.  Returns one reference
 * (the caller's), or NULL with errno. */
typedef struct gather_item {
    void *value;            /* the child's result, or */
    int failed;             /* 1: its error (return_exceptions only; a */
    loop_exception_t error; /*   cancelled child: CancelledError) */
} gather_item_t;

typedef struct gather_result {
    size_t n;
    gather_item_t items[];
} gather_result_t;

future_t *loop_gather(loop_t *loop, future_t *const *children, size_t n, int return_exceptions);
/* @end gather */

#endif
