/* future.c -- chapter 09: asyncio.Future (see future.h).  Each function is
 * the method of Lib/asyncio/futures.py with the same name; the refusals
 * use the words of its C twin, _asyncio.Future, which is what CPython
 * runs.
 *
 * Two things C adds.  Memory: a future is reference-counted, and what
 * Python's garbage collector does for cycles (a task waiting for a future
 * nobody will set: task -> future -> its callback -> task), loop_free()
 * does, through the loop's list of live futures (futures_loop_free).
 * Out of memory: a call that cannot allocate changes nothing, so
 * completing a future first makes every handle its callbacks need
 * (prepare_callbacks), and only then changes its state.
 */
#define _POSIX_C_SOURCE 200809L
#include "future_private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @region new */
/* The loop's list of live futures: asyncio's _register_task, for every
 * future (see loop_tasks_t). */
static void link_future(future_t *f)
{
    loop_tasks_t *tasks = loop_tasks(f->loop);
    f->prev = tasks->last;
    f->next = NULL;
    if (tasks->last != NULL)
        tasks->last->next = f;
    else
        tasks->first = f;
    tasks->last = f;
}

static void unlink_future(future_t *f)
{
    loop_tasks_t *tasks = loop_tasks(f->loop);
    if (f->prev != NULL)
        f->prev->next = f->next;
    else
        tasks->first = f->next;
    if (f->next != NULL)
        f->next->prev = f->prev;
    else
        tasks->last = f->prev;
    f->prev = f->next = NULL;
}

/* @region future_init */
/* Chapter 11: every field set one by one, no memset(0).  After a malloc,
 * gcc turns malloc + memset(0) into calloc, and glibc's calloc never takes
 * a block from the thread's cache of freed ones (the tcache) as malloc
 * does: it costs a trip through the allocator's bins every time. */
void future_init(future_t *f, loop_t *loop, future_kind kind, const char *class_name)
{
    f->loop = loop;
    f->refs = 1;
    f->kind = kind;
    f->class_name = class_name;
    f->state = FUTURE_PENDING;
    f->result = NULL;
    f->exception = NULL;
    f->log_traceback = false;
    f->cancel_message = NULL;
    f->cancelled_exc = NULL;
    f->callbacks = f->callbacks_tail = NULL;
    f->callback0.fn = NULL; /* its first entry's room is free */
    f->mark = NULL;
    link_future(f); /* sets prev and next */
}
/* @end future_init */

future_t *loop_create_future(loop_t *loop)
{
    if (loop == NULL) {
        errno = EINVAL;
        return NULL;
    }
    future_t *f = malloc(sizeof *f);
    if (f == NULL) {
        loop_fail(loop, ENOMEM, "out of memory for a future");
        return NULL;
    }
    future_init(f, loop, FUTURE_KIND_FUTURE, "Future");
    return f;
}

bool future_check(const future_t *f)
{
    if (f == NULL || f->loop == NULL) { /* no future, or its loop was freed */
        errno = EINVAL;
        return false;
    }
    return true;
}
/* @end new */

/* @region release */
void future_retain(future_t *f)
{
    if (f != NULL)
        f->refs++;
}

/* Report to the exception handler, as __del__ does (nothing once the loop
 * is gone: there is nobody to report to). */
static void report(future_t *f, const char *message, const loop_exception_t *exc, bool as_task)
{
    if (f->loop == NULL)
        return;
    loop_context_t context = {.message = message, .exception = exc};
    if (as_task)
        context.task = (const task_t *)f;
    else
        context.future = f;
    loop_call_exception_handler(f->loop, &context);
}

/* The last reference went: Task.__del__ and Future.__del__, then free.  A
 * finalizer sees the future whole (its repr is printed); an exception
 * handler that retains it keeps it alive (Python calls that resurrection). */
static void future_free(future_t *f)
{
    f->refs = 1; /* alive while it is being finalized */
    if (f->kind == FUTURE_KIND_TASK)
        task_finalize((task_t *)f); /* "Task was destroyed but it is pending!" */
    if (f->log_traceback) {
        char message[96];
        snprintf(message, sizeof message, "%s exception was never retrieved", f->class_name);
        f->log_traceback = false;
        report(f, message, f->exception, false);
    }
    if (--f->refs > 0)
        return; /* resurrected */
    future_clear_callbacks(f);
    if (f->kind == FUTURE_KIND_TASK)
        task_destroy((task_t *)f);
    else if (f->kind == FUTURE_KIND_GATHER)
        gather_destroy((gathering_future_t *)f);
    if (f->loop != NULL)
        unlink_future(f);
    free(f->exception);
    free(f->cancel_message);
    free(f);
}

void future_release(future_t *f)
{
    if (f != NULL && --f->refs == 0)
        future_free(f);
}

void future_release_arg(void *future)
{
    future_release(future);
}
/* @end release */

/* @region state */
loop_t *future_get_loop(const future_t *f)
{
    return f != NULL ? f->loop : NULL;
}

future_state future_get_state(const future_t *f)
{
    return f != NULL ? f->state : FUTURE_PENDING;
}

const char *future_state_name(future_state state)
{
    switch (state) {
    case FUTURE_PENDING:   return "PENDING";
    case FUTURE_CANCELLED: return "CANCELLED";
    case FUTURE_FINISHED:  return "FINISHED";
    }
    return "?";
}

int future_done(const future_t *f)
{
    return f != NULL && f->state != FUTURE_PENDING;
}

int future_cancelled(const future_t *f)
{
    return f != NULL && f->state == FUTURE_CANCELLED;
}
/* @end state */

/* @region callbacks */
/* A done callback's handle ran: fn(future). */
static void run_done_callback(loop_t *loop, void *arg)
{
    done_callback_t *cb = arg;
    cb->fn(loop, cb->future, cb->arg);
}

const done_callback_t *done_callback_of(loop_callback callback, void *arg)
{
    return callback == run_done_callback ? arg : NULL;
}

/* @region callback0 */
/* Chapter 11: an entry's memory.  The first entry a future takes while its
 * room is free lives in the future itself (f->callback0, as CPython's
 * _asyncio.Future keeps fut_callback0): a task awaits one future at a
 * time, so most futures have one callback and their entry costs no
 * malloc.  The room is free again when that entry goes. */
static done_callback_t *done_callback_alloc(future_t *f)
{
    if (f->callback0.fn == NULL) {
        f->callback0.embedded = true;
        return &f->callback0;
    }
    done_callback_t *cb = malloc(sizeof *cb); /* not calloc: see future_init */
    if (cb != NULL)
        cb->embedded = false;
    return cb;
}

static void done_callback_dispose(done_callback_t *cb)
{
    if (cb->embedded)
        cb->fn = NULL; /* the future's room is free */
    else
        free(cb);
}
/* @end callback0 */

/* ...and its handle is freed: drop what the entry holds.  The entry goes
 * first: releasing the future may free it, and the entry with it. */
static void done_callback_free(void *arg)
{
    done_callback_t *cb = arg;
    future_t *f = cb->future;
    void (*release)(void *) = cb->release;
    void *cb_arg = cb->arg;
    done_callback_dispose(cb);
    if (release != NULL)
        release(cb_arg);
    future_release(f);
}

/* Step one of __schedule_callbacks: a handle for each entry, and room in
 * the ready deque for all of them -- or, if memory runs out, nothing. */
static int prepare_callbacks(future_t *f)
{
    if (f->callbacks == NULL)
        return 0;
    if (loop_is_closed(f->loop))
        return loop_fail(f->loop, EINVAL, "Event loop is closed");
    if (loop_check_thread(f->loop) < 0) /* chapter 10: debug mode */
        return -1;
    size_t n = 0;
    done_callback_t *cb;
    for (cb = f->callbacks; cb != NULL; cb = cb->next, n++) {
        cb->handle = loop_new_handle(f->loop, run_done_callback, cb);
        if (cb->handle == NULL)
            break;
    }
    if (cb == NULL && loop_reserve_ready(f->loop, n) == 0)
        return 0;
    /* Out of memory: free the handles made so far (up to cb, which has none). */
    for (done_callback_t *made = f->callbacks; made != cb; made = made->next) {
        handle_release(made->handle); /* never queued: just freed */
        made->handle = NULL;
    }
    return loop_fail(f->loop, ENOMEM, "out of memory scheduling the callbacks of a future");
}

/* Step two, which cannot fail: each entry to the ready deque, in the
 * order they were added (call_soon(callback, self) for each), and the
 * list is empty. */
static void commit_callbacks(future_t *f)
{
    done_callback_t *cb = f->callbacks;
    f->callbacks = f->callbacks_tail = NULL;
    while (cb != NULL) {
        done_callback_t *next = cb->next;
        handle_t *handle = cb->handle;
        cb->next = NULL;
        cb->handle = NULL;
        cb->future = f;
        future_retain(f); /* the scheduled callback holds the future */
        handle_set_release(handle, done_callback_free);
        loop_push_ready(f->loop, handle);
        cb = next;
    }
}

done_callback_t *done_callback_new(future_t *f, future_callback fn, void *arg,
                                   void (*release)(void *arg), const char *name)
{
    done_callback_t *cb = done_callback_alloc(f);
    if (cb == NULL) {
        loop_fail(f->loop, ENOMEM, "out of memory for a done callback");
        return NULL;
    }
    cb->fn = fn;
    cb->arg = arg;
    cb->release = release;
    cb->name = name;
    cb->future = NULL;
    cb->handle = NULL;
    cb->next = NULL;
    if (f->state != FUTURE_PENDING) { /* it will be scheduled at once */
        if (loop_is_closed(f->loop)) {
            done_callback_dispose(cb);
            loop_fail(f->loop, EINVAL, "Event loop is closed");
            return NULL;
        }
        cb->handle = loop_new_handle(f->loop, run_done_callback, cb);
        if (cb->handle == NULL) {
            done_callback_dispose(cb);
            loop_fail(f->loop, ENOMEM, "out of memory for a done callback");
            return NULL;
        }
    }
    return cb;
}

void done_callback_discard(done_callback_t *cb)
{
    if (cb != NULL) {
        handle_release(cb->handle);
        done_callback_dispose(cb);
    }
}

/* add_done_callback's two cases: pending, append to the list; done,
 * self._loop.call_soon(fn, self) at once (room reserved by the caller). */
void done_callback_add(future_t *f, done_callback_t *cb)
{
    if (f->state != FUTURE_PENDING) {
        f->callbacks = f->callbacks_tail = cb;
        commit_callbacks(f);
        return;
    }
    if (f->callbacks_tail != NULL)
        f->callbacks_tail->next = cb;
    else
        f->callbacks = cb;
    f->callbacks_tail = cb;
}

int future_add_done_callback_owned(future_t *f, future_callback fn, void *arg,
                                   void (*release)(void *arg), const char *name)
{
    if (!future_check(f))
        return -1;
    if (fn == NULL)
        return loop_fail(f->loop, EINVAL, "callback for add_done_callback is NULL");
    done_callback_t *cb = done_callback_new(f, fn, arg, release, name);
    if (cb == NULL)
        return -1;
    if (cb->handle != NULL && loop_reserve_ready(f->loop, 1) < 0) {
        done_callback_discard(cb);
        return -1;
    }
    done_callback_add(f, cb);
    return 0;
}

int future_add_done_callback(future_t *f, future_callback fn, void *arg)
{
    return future_add_done_callback_owned(f, fn, arg, NULL, NULL);
}

size_t future_remove_done_callback(future_t *f, future_callback fn, void *arg)
{
    if (!future_check(f))
        return 0;
    size_t removed = 0;
    done_callback_t **link = &f->callbacks;
    f->callbacks_tail = NULL;
    while (*link != NULL) {
        done_callback_t *cb = *link;
        if (cb->fn == fn && cb->arg == arg) {
            *link = cb->next;
            void (*release)(void *) = cb->release;
            done_callback_dispose(cb);
            if (release != NULL)
                release(arg);
            removed++;
        } else {
            f->callbacks_tail = cb;
            link = &cb->next;
        }
    }
    return removed;
}

void future_clear_callbacks(future_t *f)
{
    done_callback_t *cb = f->callbacks;
    f->callbacks = f->callbacks_tail = NULL;
    while (cb != NULL) {
        done_callback_t *next = cb->next;
        void (*release)(void *) = cb->release;
        void *arg = cb->arg;
        done_callback_dispose(cb);
        if (release != NULL)
            release(arg);
        cb = next;
    }
}

handle_t *loop_call_soon_owned(loop_t *loop, loop_callback fn, void *arg,
                               void (*release)(void *arg))
{
    if (loop_is_closed(loop)) {
        loop_fail(loop, EINVAL, "Event loop is closed");
        return NULL;
    }
    if (loop_check_thread(loop) < 0) /* chapter 10: debug mode */
        return NULL;
    handle_t *handle = loop_new_handle(loop, fn, arg);
    if (handle == NULL) {
        loop_fail(loop, ENOMEM, "out of memory for a handle");
        return NULL;
    }
    if (loop_reserve_ready(loop, 1) < 0) {
        handle_release(handle);
        return NULL;
    }
    handle_set_release(handle, release);
    loop_push_ready(loop, handle);
    return handle;
}
/* @end callbacks */

/* @region complete */
void exception_set(loop_exception_t *e, const char *type, const char *message)
{
    snprintf(e->type, sizeof e->type, "%s", type != NULL ? type : "RuntimeError");
    snprintf(e->message, sizeof e->message, "%s", message != NULL ? message : "");
}

static int refuse_done(future_t *f)
{
    return loop_fail(f->loop, EINVAL, "invalid state"); /* InvalidStateError */
}

int future_base_set_result(future_t *f, void *value)
{
    if (f->state != FUTURE_PENDING)
        return refuse_done(f);
    if (prepare_callbacks(f) < 0)
        return -1;
    f->result = value;
    f->state = FUTURE_FINISHED;
    commit_callbacks(f);
    return 0;
}

/* @region set_exception */
int future_base_set_exception(future_t *f, const loop_exception_t *error)
{
    if (f->state != FUTURE_PENDING)
        return refuse_done(f);
    if (strcmp(error->type, "StopIteration") == 0)
        return loop_fail(f->loop, EINVAL, "StopIteration interacts badly with generators "
                                          "and cannot be raised into a Future");
    /* Chapter 11: the exception's storage, made before anything changes. */
    loop_exception_t *copy = malloc(sizeof *copy);
    if (copy == NULL)
        return loop_fail(f->loop, ENOMEM, "out of memory for an exception");
    if (prepare_callbacks(f) < 0) {
        free(copy);
        return -1;
    }
    *copy = *error;
    f->exception = copy;
    f->state = FUTURE_FINISHED;
    commit_callbacks(f);
    f->log_traceback = true;
    return 0;
}
/* @end set_exception */

int future_set_result(future_t *f, void *value)
{
    if (!future_check(f))
        return -1;
    if (f->kind == FUTURE_KIND_TASK)
        return loop_fail(f->loop, EINVAL, "Task does not support set_result operation");
    return future_base_set_result(f, value);
}

int future_set_exception(future_t *f, const loop_exception_t *error)
{
    if (!future_check(f))
        return -1;
    if (error == NULL)
        return loop_fail(f->loop, EINVAL, "set_exception: the error is NULL");
    if (f->kind == FUTURE_KIND_TASK)
        return loop_fail(f->loop, EINVAL, "Task does not support set_exception operation");
    return future_base_set_exception(f, error);
}

int future_fail(future_t *f, const char *type, const char *fmt, ...)
{
    loop_exception_t error;
    snprintf(error.type, sizeof error.type, "%s", type != NULL ? type : "RuntimeError");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error.message, sizeof error.message, fmt, ap);
    va_end(ap);
    return future_set_exception(f, &error);
}

/* @region cancel_message */
/* Chapter 11: _cancel_message's storage, made only for a message.  *out
 * is a copy of msg, as long as a loop_exception_t's message can carry, or
 * NULL for None; -1 (ENOMEM) if it cannot be made. */
int cancel_message_dup(loop_t *loop, const char *msg, char **out)
{
    *out = NULL;
    if (msg == NULL)
        return 0;
    size_t n = strnlen(msg, LOOP_EXCEPTION_MESSAGE_MAX - 1);
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return loop_fail(loop, ENOMEM, "out of memory for a cancel message");
    memcpy(copy, msg, n);
    copy[n] = '\0';
    *out = copy;
    return 0;
}

int future_base_cancel(future_t *f, const char *msg)
{
    f->log_traceback = false;
    if (f->state != FUTURE_PENDING)
        return 0;
    /* A task passes its own _cancel_message (super().cancel(msg=
     * self._cancel_message)): the same string, kept as it is. */
    char *message = f->cancel_message;
    if (msg != f->cancel_message && cancel_message_dup(f->loop, msg, &message) < 0)
        return -1;
    if (prepare_callbacks(f) < 0) {
        if (message != f->cancel_message)
            free(message);
        return -1;
    }
    if (message != f->cancel_message) {
        free(f->cancel_message);
        f->cancel_message = message;
    }
    f->state = FUTURE_CANCELLED;
    commit_callbacks(f);
    return 1;
}
/* @end cancel_message */

/* cancel(): Future's, Task's or _GatheringFuture's, by kind. */
int future_cancel(future_t *f, const char *msg)
{
    if (!future_check(f))
        return -1;
    switch (f->kind) {
    case FUTURE_KIND_TASK:   return task_cancel((task_t *)f, msg);
    case FUTURE_KIND_GATHER: return gather_cancel((gathering_future_t *)f, msg);
    case FUTURE_KIND_FUTURE: break;
    }
    return future_base_cancel(f, msg);
}
/* @end complete */

/* @region result */
/* _make_cancelled_error: the CancelledError that left a task's coroutine,
 * once; then (and for every other future) a new one with the cancel
 * message. */
void future_make_cancelled_error(future_t *f, loop_exception_t *error)
{
    if (f->cancelled_exc != NULL) {
        *error = *f->cancelled_exc;
        f->cancelled_exc = NULL;
        return;
    }
    exception_set(error, "CancelledError", f->cancel_message != NULL ? f->cancel_message : "");
}

int future_result(future_t *f, void **value, loop_exception_t *error)
{
    loop_exception_t scratch;
    if (error == NULL)
        error = &scratch;
    if (f == NULL) {
        errno = EINVAL;
        exception_set(error, "TypeError", "future is NULL");
        return -1;
    }
    if (f->state == FUTURE_CANCELLED) {
        future_make_cancelled_error(f, error);
        return -1;
    }
    if (f->state != FUTURE_FINISHED) {
        exception_set(error, "InvalidStateError", "Result is not set.");
        errno = EINVAL;
        return -1;
    }
    f->log_traceback = false;
    if (f->exception != NULL) {
        *error = *f->exception;
        return -1;
    }
    if (value != NULL)
        *value = f->result;
    return 0;
}

int future_exception(future_t *f, loop_exception_t *error)
{
    loop_exception_t scratch;
    if (error == NULL)
        error = &scratch;
    if (f == NULL) {
        errno = EINVAL;
        exception_set(error, "TypeError", "future is NULL");
        return -1;
    }
    if (f->state == FUTURE_CANCELLED) {
        future_make_cancelled_error(f, error);
        return -1;
    }
    if (f->state != FUTURE_FINISHED) {
        exception_set(error, "InvalidStateError", "Exception is not set.");
        errno = EINVAL;
        return -1;
    }
    f->log_traceback = false;
    if (f->exception != NULL) {
        *error = *f->exception;
        return 1;
    }
    return 0;
}
/* @end result */

/* @region loop_free */
/* What the garbage collector does for asyncio when the loop is dropped:
 * the futures still alive are either held by the program (it may still
 * look at them) or held only by each other, in cycles.  First every
 * pending task is reported, oldest first, while its repr still shows what
 * it waits for ("Task was destroyed but it is pending!").  Then every
 * pending future forgets its callbacks (which hold tasks and gathers) and
 * every task forgets its waiter, which breaks the cycles; what only a
 * cycle held is then freed (and its finalizer reports, through the loop
 * that still exists).  What the program still holds is detached: its loop is
 * NULL from now on, and every call but the getters and release refuses it. */
void futures_loop_free(loop_t *loop)
{
    loop_tasks_t *tasks = loop_tasks(loop);
    future_t *f;
    /* First the reports, every cycle still whole.  Each future is held
     * while it is looked at, and the next one before it is let go: an
     * exception handler may release what the program held. */
    f = tasks->first;
    future_retain(f);
    while (f != NULL) {
        future_t *next = f->next;
        future_retain(next);
        if (f->kind == FUTURE_KIND_TASK)
            task_finalize((task_t *)f);
        future_release(f);
        f = next;
    }
    f = tasks->first;
    future_retain(f);
    while (f != NULL) {
        future_t *next = f->next; /* kept alive across the release below */
        future_retain(next);
        if (f->kind == FUTURE_KIND_TASK)
            task_break_cycle((task_t *)f);
        if (f->state == FUTURE_PENDING)
            future_clear_callbacks(f);
        future_release(f);
        f = next;
    }
    /* Whatever is left is the program's: detach it. */
    while (tasks->first != NULL) {
        f = tasks->first;
        unlink_future(f);
        f->loop = NULL;
    }
    tasks->current = NULL;
}
/* @end loop_free */
