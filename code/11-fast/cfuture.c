/* cfuture.c -- chapter 10: concurrent.futures.Future (_base.py), in C.
 *
 * asyncio's future_t (future.c) belongs to one thread, its loop's: nobody
 * else may touch it, so it needs no lock, and its callbacks wait for the
 * loop's next tick.  A concurrent future is the opposite: any thread may
 * complete it, cancel it or wait on it.  So it has what _base.Future has:
 *
 *   - a mutex (_condition's lock) around its state, result and callbacks;
 *   - a condition variable (_condition) on which result() and exception()
 *     wait, woken by every completion;
 *   - done callbacks that run AT ONCE, in the thread that completes the
 *     future (or in the thread that adds one to a future already done),
 *     outside the lock: a callback may take the lock again (result()), or
 *     another lock of its own;
 *   - a reference count that owners in several threads share (refs_add,
 *     refs_drop: executor_private.h says why they are not atomics).
 *
 * The states are _base.py's five: PENDING -> RUNNING (a worker took the
 * job: set_running_or_notify_cancel) -> FINISHED, or PENDING -> CANCELLED
 * -> CANCELLED_AND_NOTIFIED (the worker saw the cancellation and skipped the
 * job).  A RUNNING future cannot be cancelled: its job is already running.
 */
#define _POSIX_C_SOURCE 200809L
#include "executor_private.h"
#include "future_private.h" /* exception_set() */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* @region cfuture_struct */
typedef struct cf_callback {
    cfuture_callback fn;
    void *arg;
    void (*release)(void *arg); /* NULL: arg is borrowed */
    struct cf_callback *next;
} cf_callback_t;

struct cfuture {
    pthread_mutex_t lock;       /* _condition's lock: guards everything below */
    pthread_cond_t changed;     /* _condition: signalled at every completion */
    unsigned refs;              /* owners, in any thread: refs_add / refs_drop */
    cfuture_state state;        /* _state */
    void *result;               /* _result */
    bool has_error;             /* _exception is not None */
    loop_exception_t error;
    cf_callback_t *callbacks, *tail; /* _done_callbacks, in order */
};
/* @end cfuture_struct */

/* executor_last_error(): one buffer per thread, since no loop is at hand
 * whose loop_error() could hold the message. */
static _Thread_local char last_error[LOOP_EXCEPTION_MESSAGE_MAX];

int executor_fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    errno = err;
    return -1;
}

const char *executor_last_error(void)
{
    return last_error;
}

cfuture_t *cfuture_new(void)
{
    cfuture_t *f = calloc(1, sizeof *f);
    if (f == NULL) {
        executor_fail(ENOMEM, "out of memory for a concurrent future");
        return NULL;
    }
    /* The waits measure their timeout on CLOCK_MONOTONIC, which the wall
     * clock's jumps do not move.  (macOS has no pthread_condattr_setclock:
     * there the wait reads the wall clock.) */
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
#ifndef __APPLE__
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
#endif
    pthread_cond_init(&f->changed, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&f->lock, NULL);
    f->refs = 1;
    f->state = CFUTURE_PENDING;
    return f;
}

/* @region refs */
static pthread_mutex_t refs_lock = PTHREAD_MUTEX_INITIALIZER; /* never destroyed */

void refs_add(unsigned *refs)
{
    pthread_mutex_lock(&refs_lock);
    (*refs)++;
    pthread_mutex_unlock(&refs_lock);
}

/* The lock also orders every other owner's last use of the object before
 * the free that follows a drop to 0. */
unsigned refs_drop(unsigned *refs)
{
    pthread_mutex_lock(&refs_lock);
    unsigned left = --*refs;
    pthread_mutex_unlock(&refs_lock);
    return left;
}
/* @end refs */

void cfuture_retain(cfuture_t *f)
{
    if (f != NULL)
        refs_add(&f->refs);
}

void cfuture_release(cfuture_t *f)
{
    if (f == NULL || refs_drop(&f->refs) > 0)
        return;
    cf_callback_t *cb = f->callbacks; /* never run: the future never finished */
    while (cb != NULL) {
        cf_callback_t *next = cb->next;
        if (cb->release != NULL)
            cb->release(cb->arg);
        free(cb);
        cb = next;
    }
    pthread_cond_destroy(&f->changed);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

cfuture_state cfuture_get_state(cfuture_t *f)
{
    pthread_mutex_lock(&f->lock);
    cfuture_state s = f->state;
    pthread_mutex_unlock(&f->lock);
    return s;
}

static bool is_cancelled(cfuture_state s)
{
    return s == CFUTURE_CANCELLED || s == CFUTURE_CANCELLED_AND_NOTIFIED;
}

static bool is_done(cfuture_state s)
{
    return is_cancelled(s) || s == CFUTURE_FINISHED;
}

int cfuture_cancelled(cfuture_t *f)
{
    return is_cancelled(cfuture_get_state(f));
}

int cfuture_running(cfuture_t *f)
{
    return cfuture_get_state(f) == CFUTURE_RUNNING;
}

int cfuture_done(cfuture_t *f)
{
    return is_done(cfuture_get_state(f));
}

/* @region invoke_callbacks */
/* _invoke_callbacks(): called once, by the thread that completed the
 * future, after it let go of the lock.  The list was taken out under the
 * lock, so a callback added from now on sees a done future and runs at once
 * in its own thread: each callback runs exactly once. */
static void invoke_callbacks(cfuture_t *f, cf_callback_t *cb)
{
    while (cb != NULL) {
        cf_callback_t *next = cb->next;
        cb->fn(f, cb->arg);
        if (cb->release != NULL)
            cb->release(cb->arg);
        free(cb);
        cb = next;
    }
}

/* Under the lock: the callbacks, taken out of the future; and every waiter
 * woken (_condition.notify_all()). */
static cf_callback_t *complete_locked(cfuture_t *f, cfuture_state state)
{
    f->state = state;
    cf_callback_t *cb = f->callbacks;
    f->callbacks = f->tail = NULL;
    pthread_cond_broadcast(&f->changed);
    return cb;
}
/* @end invoke_callbacks */

/* @region cfuture_cancel */
/* def cancel(self):
 *     with self._condition:
 *         if self._state in [RUNNING, FINISHED]:
 *             return False
 *         if self._state in [CANCELLED, CANCELLED_AND_NOTIFIED]:
 *             return True
 *         self._state = CANCELLED
 *         self._condition.notify_all()
 *     self._invoke_callbacks()
 *     return True */
int cfuture_cancel(cfuture_t *f)
{
    pthread_mutex_lock(&f->lock);
    cfuture_state s = f->state;
    if (s == CFUTURE_RUNNING || s == CFUTURE_FINISHED || is_cancelled(s)) {
        pthread_mutex_unlock(&f->lock);
        return is_cancelled(s);
    }
    cf_callback_t *cb = complete_locked(f, CFUTURE_CANCELLED);
    pthread_mutex_unlock(&f->lock);
    cfuture_retain(f); /* a callback may drop the caller's reference */
    invoke_callbacks(f, cb);
    cfuture_release(f);
    return 1;
}
/* @end cfuture_cancel */

/* @region set_running */
/* def set_running_or_notify_cancel(self):
 *     with self._condition:
 *         if self._state == CANCELLED:
 *             self._state = CANCELLED_AND_NOTIFIED
 *             for waiter in self._waiters: waiter.add_cancelled(self)
 *             return False
 *         elif self._state == PENDING:
 *             self._state = RUNNING
 *             return True
 *         else:
 *             raise RuntimeError('Future in unexpected state') */
int cfuture_set_running_or_notify_cancel(cfuture_t *f)
{
    pthread_mutex_lock(&f->lock);
    int rc;
    if (f->state == CFUTURE_CANCELLED) {
        f->state = CFUTURE_CANCELLED_AND_NOTIFIED;
        rc = 0;
    } else if (f->state == CFUTURE_PENDING) {
        f->state = CFUTURE_RUNNING;
        rc = 1;
    } else {
        rc = -1;
    }
    pthread_mutex_unlock(&f->lock);
    if (rc < 0)
        executor_fail(EINVAL, "Future in unexpected state");
    return rc;
}
/* @end set_running */

/* _STATE_TO_DESCRIPTION_MAP, and InvalidStateError's words:
 * '{}: {!r}'.format(self._state, self), without the address. */
static const char *state_name(cfuture_state s)
{
    static const char *names[] = {"PENDING", "RUNNING", "CANCELLED", "CANCELLED_AND_NOTIFIED",
                                  "FINISHED"};
    return names[s];
}

static const char *state_description(cfuture_state s)
{
    static const char *names[] = {"pending", "running", "cancelled", "cancelled", "finished"};
    return names[s];
}

/* set_result and set_exception: FINISHED, unless it is done already. */
static int finish(cfuture_t *f, void *value, const loop_exception_t *error)
{
    pthread_mutex_lock(&f->lock);
    cfuture_state s = f->state;
    if (is_done(s)) {
        pthread_mutex_unlock(&f->lock);
        return executor_fail(EINVAL, "%s: <Future state=%s>", state_name(s),
                             state_description(s));
    }
    f->result = value;
    f->has_error = error != NULL;
    if (error != NULL)
        f->error = *error;
    cf_callback_t *cb = complete_locked(f, CFUTURE_FINISHED);
    pthread_mutex_unlock(&f->lock);
    cfuture_retain(f);
    invoke_callbacks(f, cb);
    cfuture_release(f);
    return 0;
}

int cfuture_set_result(cfuture_t *f, void *value)
{
    return finish(f, value, NULL);
}

int cfuture_set_exception(cfuture_t *f, const loop_exception_t *error)
{
    if (error == NULL)
        return executor_fail(EINVAL, "cfuture_set_exception: error is NULL");
    return finish(f, NULL, error);
}

/* @region wait */
/* Wait under the lock until the future is done, at most timeout seconds
 * (< 0: forever).  0 if it is done, -1 on timeout.  Python's
 * Condition.wait(timeout) wakes once; a condition variable may wake for
 * nothing, so this loops until done or past the deadline. */
static int wait_done_locked(cfuture_t *f, double timeout)
{
    if (timeout < 0 || timeout > 1e9) { /* forever (a billion seconds is) */
        while (!is_done(f->state))
            pthread_cond_wait(&f->changed, &f->lock);
        return 0;
    }
    struct timespec deadline;
#ifdef __APPLE__
    clock_gettime(CLOCK_REALTIME, &deadline);
#else
    clock_gettime(CLOCK_MONOTONIC, &deadline);
#endif
    double whole = floor(timeout);
    deadline.tv_sec += (time_t)whole;
    deadline.tv_nsec += (long)((timeout - whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    while (!is_done(f->state))
        if (pthread_cond_timedwait(&f->changed, &f->lock, &deadline) == ETIMEDOUT)
            return is_done(f->state) ? 0 : -1;
    return 0;
}
/* @end wait */

/* @region result */
/* def result(self, timeout=None):
 *     with self._condition:
 *         if self._state in [CANCELLED, CANCELLED_AND_NOTIFIED]:
 *             raise CancelledError()
 *         elif self._state == FINISHED:
 *             return self.__get_result()
 *         self._condition.wait(timeout)
 *         (the same two tests again)
 *         else:
 *             raise TimeoutError()
 * exception(timeout) is the same with `return self._exception`. */
static int outcome(cfuture_t *f, double timeout, void **value, loop_exception_t *error)
{
    loop_exception_t scratch;
    if (error == NULL)
        error = &scratch;
    if (isnan(timeout)) {
        exception_set(error, "ValueError", "timeout must not be NaN");
        return executor_fail(EINVAL, "timeout must not be NaN");
    }
    pthread_mutex_lock(&f->lock);
    int rc = wait_done_locked(f, timeout);
    int err = 0;
    if (rc < 0) {
        exception_set(error, "TimeoutError", "");
        err = ETIMEDOUT;
    } else if (is_cancelled(f->state)) {
        exception_set(error, "CancelledError", "");
        err = ECANCELED;
    } else if (f->has_error) {
        *error = f->error;
        rc = 1;
    } else {
        *value = f->result;
    }
    pthread_mutex_unlock(&f->lock);
    if (err != 0)
        return executor_fail(err, "%s", err == ETIMEDOUT ? "TimeoutError" : "CancelledError");
    return rc;
}

int cfuture_result(cfuture_t *f, double timeout, void **value, loop_exception_t *error)
{
    void *v = NULL;
    int rc = outcome(f, timeout, &v, error);
    if (rc == 1) { /* the job's own error */
        errno = EIO;
        return -1;
    }
    if (rc == 0 && value != NULL)
        *value = v;
    return rc;
}

int cfuture_exception(cfuture_t *f, double timeout, loop_exception_t *error)
{
    void *v;
    return outcome(f, timeout, &v, error);
}
/* @end result */

/* @region add_done_callback */
/* def add_done_callback(self, fn):
 *     with self._condition:
 *         if self._state not in [CANCELLED, CANCELLED_AND_NOTIFIED, FINISHED]:
 *             self._done_callbacks.append(fn)
 *             return
 *     try:
 *         fn(self)
 *     except Exception:
 *         LOGGER.exception('exception calling callback for %r', self) */
int cfuture_add_done_callback_owned(cfuture_t *f, cfuture_callback fn, void *arg,
                                    void (*release)(void *arg))
{
    if (f == NULL || fn == NULL)
        return executor_fail(EINVAL, "add_done_callback: NULL future or callback");
    cf_callback_t *cb = malloc(sizeof *cb);
    if (cb == NULL)
        return executor_fail(ENOMEM, "out of memory for a done callback");
    *cb = (cf_callback_t){.fn = fn, .arg = arg, .release = release, .next = NULL};
    pthread_mutex_lock(&f->lock);
    if (!is_done(f->state)) {
        if (f->tail != NULL)
            f->tail->next = cb;
        else
            f->callbacks = cb;
        f->tail = cb;
        pthread_mutex_unlock(&f->lock);
        return 0;
    }
    pthread_mutex_unlock(&f->lock);
    invoke_callbacks(f, cb); /* done already: now, in this thread */
    return 0;
}

int cfuture_add_done_callback(cfuture_t *f, cfuture_callback fn, void *arg)
{
    return cfuture_add_done_callback_owned(f, fn, arg, NULL);
}
/* @end add_done_callback */
