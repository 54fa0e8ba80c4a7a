/* task.c -- chapter 09: asyncio.Task (see task.h).  A task is a future
 * that drives a coroutine: __step runs it until it awaits something, and
 * __wakeup, the done callback of what it awaits, runs the next step.
 * Each function is the method of Lib/asyncio/tasks.py with the same name;
 * the lines of tasks.py a block mirrors are quoted above it.
 */
#define _POSIX_C_SOURCE 200809L
#include "future_private.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void task_step_cb(loop_t *loop, void *arg);
static void task_wakeup(loop_t *loop, future_t *fut, void *arg);

/* _task_name_counter: every task this process made, as CPython counts.
 * Chapter 10: loops run in several threads at once, each making tasks, so
 * the counter is atomic (CPython's is itertools.count under the GIL). */
static _Atomic unsigned long task_name_counter;

static void task_release_arg(void *task)
{
    future_release(task);
}

/* Release a chain of coroutines, the innermost first: it may live inside
 * the frame of the one that awaits it (a sleep_t in its caller's struct). */
static void release_chain(coro_t *c)
{
    if (c == NULL)
        return;
    coro_t *inner = c->inner;
    c->inner = NULL;
    release_chain(inner);
    if (c->release != NULL)
        c->release(c);
}

/* @region task_name */
/* f'Task-{number}', what snprintf(buf, size, "Task-%lu", number) writes,
 * by hand.  Chapter 11: snprintf parses its format at every call, and the
 * profile of `create` found it the largest single cost of a task (770
 * instructions of 3,950).  buf holds TASK_NAME_MAX bytes. */
static void task_default_name(char *buf, unsigned long number)
{
    char digits[20]; /* 2^64 - 1 has 20 */
    int n = 0;
    do {
        digits[n++] = (char)('0' + number % 10);
        number /= 10;
    } while (number > 0);
    memcpy(buf, "Task-", 5);
    for (int i = 0; i < n; i++) /* the digits were made last first */
        buf[5 + i] = digits[n - 1 - i];
    buf[5 + n] = '\0';
}
/* @end task_name */

/* @region new */
/* Task.__init__: the first step is call_soon'd now
 *     self._loop.call_soon(self.__step, context=self._context)
 * and the handle holds the task (the loop's reference, task.h). */
task_t *task_new(loop_t *loop, coro_t *coro, const char *name)
{
    if (loop == NULL || coro == NULL) {
        release_chain(coro);
        errno = EINVAL;
        return NULL;
    }
    if (loop_is_closed(loop)) {
        release_chain(coro);
        loop_fail(loop, EINVAL, "Event loop is closed");
        return NULL;
    }
    /* Chapter 10: debug mode refuses another thread here, before the task
     * touches the loop (CPython's refusal comes from the call_soon below). */
    if (loop_check_thread(loop) < 0) {
        release_chain(coro);
        return NULL;
    }
    /* Chapter 11: the default name lives in the task (t->default_name);
     * only a name the caller gives is copied to memory of its own. */
    task_t *t = malloc(sizeof *t);
    char *copy = name != NULL ? malloc(strlen(name) + 1) : NULL;
    if (t == NULL || (name != NULL && copy == NULL)) {
        free(t);
        free(copy);
        release_chain(coro);
        loop_fail(loop, ENOMEM, "out of memory for a task");
        return NULL;
    }
    if (name == NULL) { /* f'Task-{_task_name_counter()}' */
        task_default_name(t->default_name, atomic_fetch_add(&task_name_counter, 1) + 1);
        t->name = t->default_name;
    } else {
        t->name = strcpy(copy, name);
    }
    future_init(&t->future, loop, FUTURE_KIND_TASK, "Task");
    t->coro = coro;
    t->fut_waiter = NULL;
    t->must_cancel = false;
    t->num_cancels_requested = 0;
    t->step_error = NULL;
    t->log_destroy_pending = true;
    future_retain(&t->future); /* the step's handle holds the task */
    if (loop_call_soon_owned(loop, task_step_cb, t, task_release_arg) == NULL) {
        int err = errno;
        t->log_destroy_pending = false; /* never was a task: free it quietly */
        t->future.refs--;           /* no handle was made to hold it */
        future_release(&t->future); /* the last reference: releases the coroutine too */
        errno = err;
        return NULL;
    }
    return t;
}

task_t *loop_create_task(loop_t *loop, coro_t *coro)
{
    if (loop == NULL || coro == NULL) {
        release_chain(coro);
        errno = EINVAL;
        return NULL;
    }
    if (loop_is_closed(loop)) { /* self._check_closed() */
        release_chain(coro);
        loop_fail(loop, EINVAL, "Event loop is closed");
        return NULL;
    }
    loop_tasks_t *tasks = loop_tasks(loop);
    if (tasks->factory != NULL)
        return tasks->factory(loop, coro, tasks->factory_ctx);
    return task_new(loop, coro, NULL);
}

void loop_set_task_factory(loop_t *loop, loop_task_factory factory, void *ctx)
{
    if (loop == NULL)
        return;
    loop_tasks(loop)->factory = factory;
    loop_tasks(loop)->factory_ctx = factory != NULL ? ctx : NULL;
}
/* @end new */

/* @region drive */
/* coro.send(value) / coro.throw(exc), for a chain of coroutines that
 * await each other with CORO_CALL.  Python's `await other()` runs the
 * other coroutine inside the same frame stack: send() reaches the
 * innermost one, and when it returns, its caller goes on at once, in the
 * same step.  The C chain is c->inner links from the task's coroutine
 * down; this loop is Python's frame stack.  It returns what the step ended
 * with: SUSPENDED (*last is the coroutine that awaits: its c->awaiting is
 * the future, or NULL for a bare yield), or how the task's own coroutine
 * finished. */
static coro_status task_drive(task_t *t, const loop_exception_t *thrown, coro_t **last)
{
    coro_t *c = t->coro;
    while (c->inner != NULL)
        c = c->inner;
    c->failed = thrown != NULL; /* throw(exc) or send(None) */
    if (thrown != NULL)
        c->error = *thrown;
    for (;;) {
        coro_status status;
        c->task = t;
        if (c->failed && c->state == 0) {
            /* throw() into a coroutine that never started: the error is
             * raised at its first line, and none of its body runs. */
            c->state = -1;
            status = CORO_RAISED;
        } else {
            status = c->step(c);
        }
        if (status == CORO_SUSPENDED) {
            if (c->inner != NULL) { /* await other(): run it now */
                c = c->inner;
                c->failed = 0;
                continue;
            }
            if (c->awaiting != NULL && future_done(c->awaiting)) {
                /* Future.__await__: `if not self.done(): yield self` --
                 * a done future does not suspend; its result is taken at
                 * once. */
                c->failed = 0;
                continue;
            }
            *last = c;
            return CORO_SUSPENDED;
        }
        /* PEP 479: a StopIteration raised inside a coroutine does not
         * leave it as such (it would read as a return): the coroutine
         * machinery turns it into RuntimeError. */
        if (status == CORO_RAISED && strcmp(c->error.type, "StopIteration") == 0)
            exception_set(&c->error, "RuntimeError", "coroutine raised StopIteration");
        *last = c;
        if (c == t->coro)
            return status; /* StopIteration, or the exception, leaves the task's coroutine */
        /* c finished: its caller resumes with its value or its error. */
        coro_t *parent = t->coro;
        while (parent->inner != c)
            parent = parent->inner;
        parent->inner = NULL;
        parent->failed = status == CORO_RAISED;
        if (status == CORO_RAISED)
            parent->error = c->error;
        else
            parent->value = c->value;
        if (c->release != NULL)
            c->release(c);
        c = parent;
    }
}
/* @end drive */

/* @region schedule_step */
/* call_soon(self.__step, exc): the next step, throwing exc in if not NULL.
 * A task has at most one step scheduled, so the error waits in the task
 * (chapter 11: in a copy made for it; a step that sends None needs none). */
static int schedule_step(task_t *t, const loop_exception_t *exc)
{
    loop_exception_t *copy = NULL;
    if (exc != NULL) {
        copy = malloc(sizeof *copy);
        if (copy == NULL)
            return loop_fail(t->future.loop, ENOMEM, "out of memory for an exception");
        *copy = *exc;
    }
    future_retain(&t->future);
    if (loop_call_soon_owned(t->future.loop, task_step_cb, t, task_release_arg) == NULL) {
        t->future.refs--; /* not scheduled: no handle holds it */
        free(copy);
        return -1;
    }
    t->step_error = copy;
    return 0;
}
/* @end schedule_step */

/* Out of memory inside a step: what CPython does with a MemoryError
 * raised in __step -- it leaves through the callback, to the exception
 * handler, and the task stays as it was (pending, and stuck).  (Any other
 * refusal here would be a RuntimeError of the loop's.) */
static void step_out_of_memory(task_t *t)
{
    loop_raise(t->future.loop, errno == ENOMEM ? "MemoryError" : "RuntimeError", "%s",
               loop_error(t->future.loop));
}

static bool is_type(const loop_exception_t *e, const char *type)
{
    return strcmp(e->type, type) == 0;
}

/* @region step */
static void task_step(task_t *t, const loop_exception_t *exc_in)
{
    future_t *f = &t->future;
    loop_t *loop = f->loop;
    char repr[LOOP_EXCEPTION_MESSAGE_MAX];
    /* if self.done():
     *     raise exceptions.InvalidStateError(...) */
    if (f->state != FUTURE_PENDING) {
        loop_raise(loop, "InvalidStateError", "_step(): already done: %s",
                   task_repr(t, repr, sizeof repr));
        return;
    }
    /* if self._must_cancel:
     *     if not isinstance(exc, exceptions.CancelledError):
     *         exc = self._make_cancelled_error()
     *     self._must_cancel = False */
    loop_exception_t exc;
    bool throwing = exc_in != NULL;
    if (throwing)
        exc = *exc_in;
    if (t->must_cancel) {
        if (!throwing || !is_type(&exc, "CancelledError")) {
            future_make_cancelled_error(f, &exc);
            throwing = true;
        }
        t->must_cancel = false;
    }
    /* self._fut_waiter = None */
    future_t *waited = t->fut_waiter;
    t->fut_waiter = NULL;
    future_release(waited);

    /* _enter_task(self._loop, self)
     * try:
     *     if exc is None: result = coro.send(None)
     *     else:           result = coro.throw(exc) */
    loop_tasks(loop)->current = t;
    coro_t *c;
    coro_status status = task_drive(t, throwing ? &exc : NULL, &c);

    if (status == CORO_RETURNED) {
        /* except StopIteration as exc:
         *     if self._must_cancel:
         *         self._must_cancel = False
         *         super().cancel(msg=self._cancel_message)
         *     else:
         *         super().set_result(exc.value) */
        int rc;
        if (t->must_cancel) {
            t->must_cancel = false;
            rc = future_base_cancel(f, f->cancel_message);
        } else {
            rc = future_base_set_result(f, t->coro->value);
        }
        if (rc < 0)
            step_out_of_memory(t);
    } else if (status == CORO_RAISED) {
        loop_exception_t error = t->coro->error;
        int rc;
        if (is_type(&error, "CancelledError")) {
            /* except exceptions.CancelledError as exc:
             *     self._cancelled_exc = exc
             *     super().cancel()  # I.e., Future.cancel(self).
             * (The exception stays where it is, in the finished coroutine,
             * which the task keeps until it is freed.) */
            f->cancelled_exc = &t->coro->error;
            rc = future_base_cancel(f, NULL);
        } else {
            /* except (KeyboardInterrupt, SystemExit) as exc:
             *     super().set_exception(exc)
             *     raise
             * except BaseException as exc:
             *     super().set_exception(exc) */
            rc = future_base_set_exception(f, &error);
            if (rc == 0 && (is_type(&error, LOOP_KEYBOARD_INTERRUPT) ||
                            is_type(&error, LOOP_SYSTEM_EXIT)))
                loop_raise(loop, error.type, "%s", error.message);
        }
        if (rc < 0)
            step_out_of_memory(t);
    } else if (c->awaiting != NULL) {
        /* The coroutine awaits a pending future (`yield self` in
         * Future.__await__: result is the future). */
        future_t *result = c->awaiting;
        if (result->loop != loop) {
            loop_exception_t new_exc;
            char other[LOOP_EXCEPTION_MESSAGE_MAX];
            snprintf(new_exc.type, sizeof new_exc.type, "RuntimeError");
            snprintf(new_exc.message, sizeof new_exc.message,
                     "Task %s got Future %s attached to a different loop",
                     task_repr(t, repr, sizeof repr), future_repr(result, other, sizeof other));
            if (schedule_step(t, &new_exc) < 0)
                step_out_of_memory(t);
        } else if (result == f) {
            /* if result is self:
             *     new_exc = RuntimeError(f'Task cannot await on itself: {self!r}')
             *     self._loop.call_soon(self.__step, new_exc, context=self._context) */
            loop_exception_t new_exc;
            snprintf(new_exc.type, sizeof new_exc.type, "RuntimeError");
            snprintf(new_exc.message, sizeof new_exc.message, "Task cannot await on itself: %s",
                     task_repr(t, repr, sizeof repr));
            if (schedule_step(t, &new_exc) < 0)
                step_out_of_memory(t);
        } else {
            /* result.add_done_callback(self.__wakeup, context=self._context)
             * self._fut_waiter = result
             * if self._must_cancel:
             *     if self._fut_waiter.cancel(msg=self._cancel_message):
             *         self._must_cancel = False */
            future_retain(f); /* the wakeup holds the task */
            if (future_add_done_callback_owned(result, task_wakeup, t, task_release_arg,
                                               "Task.task_wakeup") < 0) {
                f->refs--;
                step_out_of_memory(t);
            } else {
                future_retain(result);
                t->fut_waiter = result;
                if (t->must_cancel &&
                    future_cancel(result, f->cancel_message) == 1)
                    t->must_cancel = false;
            }
        }
    } else {
        /* elif result is None:
         *     # Bare yield relinquishes control for one event loop iteration.
         *     self._loop.call_soon(self.__step, context=self._context) */
        if (schedule_step(t, NULL) < 0)
            step_out_of_memory(t);
    }
    /* finally: _leave_task(self._loop, self) */
    loop_tasks(loop)->current = NULL;
}
/* @end step */

/* @region wakeup */
/* The step's handle ran. */
static void task_step_cb(loop_t *loop, void *arg)
{
    (void)loop;
    task_t *t = arg;
    if (t->step_error != NULL) {
        loop_exception_t exc = *t->step_error;
        free(t->step_error);
        t->step_error = NULL;
        task_step(t, &exc);
    } else {
        task_step(t, NULL);
    }
}

/* def __wakeup(self, future):
 *     try:
 *         future.result()
 *     except BaseException as exc:
 *         self.__step(exc)
 *     else:
 *         self.__step()
 * Called directly: no call_soon of its own (it IS the future's done
 * callback, which was call_soon'd). */
static void task_wakeup(loop_t *loop, future_t *fut, void *arg)
{
    (void)loop;
    task_t *t = arg;
    loop_exception_t exc;
    if (future_result(fut, NULL, &exc) < 0)
        task_step(t, &exc);
    else
        task_step(t, NULL);
}
/* @end wakeup */

const task_t *task_of_callback(loop_callback callback, void *arg)
{
    if (callback == task_step_cb)
        return arg;
    const done_callback_t *cb = done_callback_of(callback, arg);
    if (cb != NULL && cb->fn == task_wakeup)
        return cb->arg;
    return NULL;
}

/* @region cancel */
int task_cancel(task_t *t, const char *msg)
{
    if (t == NULL || !future_check(&t->future))
        return -1;
    future_t *f = &t->future;
    /* self._log_traceback = False
     * if self.done(): return False
     * self._num_cancels_requested += 1 */
    f->log_traceback = false;
    if (f->state != FUTURE_PENDING)
        return 0;
    t->num_cancels_requested++;
    /* if self._fut_waiter is not None:
     *     if self._fut_waiter.cancel(msg=msg):
     *         return True */
    if (t->fut_waiter != NULL) {
        int rc = future_cancel(t->fut_waiter, msg);
        if (rc == 1)
            return 1;
        if (rc < 0) { /* out of memory: nothing changed */
            t->num_cancels_requested--;
            return -1;
        }
    }
    /* self._must_cancel = True
     * self._cancel_message = msg */
    char *message;
    if (cancel_message_dup(f->loop, msg, &message) < 0) { /* out of memory */
        t->num_cancels_requested--;
        return -1;
    }
    t->must_cancel = true;
    free(f->cancel_message);
    f->cancel_message = message;
    return 1;
}

unsigned task_cancelling(const task_t *t)
{
    return t != NULL ? t->num_cancels_requested : 0;
}

unsigned task_uncancel(task_t *t)
{
    if (t != NULL && t->num_cancels_requested > 0)
        t->num_cancels_requested--;
    return t != NULL ? t->num_cancels_requested : 0;
}
/* @end cancel */

/* @region accessors */
future_t *task_future(task_t *t)
{
    return t != NULL ? &t->future : NULL;
}

task_t *future_task(future_t *f)
{
    return f != NULL && f->kind == FUTURE_KIND_TASK ? (task_t *)f : NULL;
}

void task_retain(task_t *t)
{
    future_retain(task_future(t));
}

void task_release(task_t *t)
{
    future_release(task_future(t));
}

const char *task_get_name(const task_t *t)
{
    return t != NULL ? t->name : NULL;
}

int task_set_name(task_t *t, const char *name)
{
    if (t == NULL || name == NULL) {
        errno = EINVAL;
        return -1;
    }
    char *copy = malloc(strlen(name) + 1);
    if (copy == NULL) {
        if (t->future.loop != NULL)
            loop_fail(t->future.loop, ENOMEM, "out of memory for a task's name");
        errno = ENOMEM;
        return -1;
    }
    strcpy(copy, name); /* before the free: name may be the old name itself */
    if (t->name != t->default_name)
        free(t->name);
    t->name = copy;
    return 0;
}

coro_t *task_get_coro(const task_t *t)
{
    return t != NULL ? t->coro : NULL;
}

size_t loop_all_tasks(loop_t *loop, task_t **out, size_t max)
{
    size_t n = 0;
    if (loop == NULL)
        return 0;
    for (future_t *f = loop_tasks(loop)->first; f != NULL; f = f->next) {
        if (f->kind != FUTURE_KIND_TASK || f->state != FUTURE_PENDING)
            continue;
        if (out != NULL && n < max)
            out[n] = (task_t *)f;
        n++;
    }
    return n;
}

task_t *loop_current_task(loop_t *loop)
{
    return loop != NULL ? loop_tasks(loop)->current : NULL;
}
/* @end accessors */

/* @region repr */
/* base_tasks._task_repr_info: the future's info, with 'cancelling' for a
 * pending task asked to cancel, the name, the coroutine, what it waits
 * for. */
char *task_repr(const task_t *t, char *buf, size_t size)
{
    if (t == NULL) {
        snprintf(buf, size, "None");
        return buf;
    }
    char state[16], outcome[300], cbs[300], name[96], wait_for[400] = "";
    future_repr_parts(&t->future, state, sizeof state, outcome, sizeof outcome, cbs, sizeof cbs);
    if (t->num_cancels_requested > 0 && t->future.state == FUTURE_PENDING)
        snprintf(state, sizeof state, "cancelling");
    str_repr(t->name != NULL ? t->name : "", name, sizeof name);
    if (t->fut_waiter != NULL) {
        char waiter[380];
        snprintf(wait_for, sizeof wait_for, " wait_for=%s",
                 future_repr(t->fut_waiter, waiter, sizeof waiter));
    }
    const char *coro = t->coro != NULL && t->coro->name != NULL ? t->coro->name : "coroutine";
    snprintf(buf, size, "<Task %s name=%s coro=<%s()>%s%s%s%s%s>", state, name, coro, wait_for,
             outcome[0] ? " " : "", outcome, cbs[0] ? " " : "", cbs);
    return buf;
}
/* @end repr */

/* @region finalize */
/* Task.__del__:
 *     if self._state == futures._PENDING and self._log_destroy_pending:
 *         context = {'task': self,
 *                    'message': 'Task was destroyed but it is pending!'} */
void task_finalize(task_t *t)
{
    if (t->future.state != FUTURE_PENDING || !t->log_destroy_pending || t->future.loop == NULL)
        return;
    t->log_destroy_pending = false; /* once */
    loop_context_t context = {.message = "Task was destroyed but it is pending!", .task = t};
    loop_call_exception_handler(t->future.loop, &context);
}

void task_destroy(task_t *t)
{
    free(t->step_error);
    t->step_error = NULL;
    future_release(t->fut_waiter);
    t->fut_waiter = NULL;
    t->future.cancelled_exc = NULL; /* it lived in the coroutine */
    release_chain(t->coro);
    t->coro = NULL;
    if (t->name != t->default_name)
        free(t->name);
    t->name = NULL;
}

/* loop_free(): a pending task is reported now, then forgets its waiter
 * (whose wakeup callback holds the task: the cycle). */
void task_break_cycle(task_t *t)
{
    task_finalize(t);
    future_t *waited = t->fut_waiter;
    if (waited == NULL)
        return;
    t->fut_waiter = NULL;
    future_remove_done_callback(waited, task_wakeup, t);
    future_release(waited);
}
/* @end finalize */
