/* sleep.c -- chapter 09: asyncio.sleep, wait_for and _cancel_and_wait,
 * written as coroutines with coro.h's macros: the same code a reader
 * writes for his own coroutines.  Each keeps its locals in its frame
 * struct (task.h) and cleans up in its release hook, which the task calls
 * when the coroutine has finished, or when the task is freed while the
 * coroutine is suspended (CPython closes the coroutine then, running its
 * `finally` blocks).
 */
#define _POSIX_C_SOURCE 200809L
#include "future_private.h"

#include <math.h>
#include <string.h>

static loop_t *running_loop_of(coro_t *c)
{
    return future_get_loop(task_future(c->task)); /* events.get_running_loop() */
}

/* @region sleep */
/* futures._set_result_unless_cancelled(fut, result) -- the timer's callback. */
static void set_result_unless_cancelled(loop_t *loop, void *arg)
{
    future_t *fut = arg;
    if (future_cancelled(fut))
        return;
    if (future_set_result(fut, NULL) < 0)
        loop_raise(loop, "MemoryError", "%s", loop_error(loop));
}

/* finally: h.cancel() -- and drop what the frame holds. */
static void sleep_cleanup(coro_t *c)
{
    sleep_t *s = (sleep_t *)c;
    if (s->timer != NULL) {
        handle_cancel(s->timer);
        handle_release(s->timer);
        s->timer = NULL;
    }
    future_release(s->future);
    s->future = NULL;
}

/* async def sleep(delay, result=None):
 *     if delay <= 0:
 *         await __sleep0()
 *         return result
 *     loop = events.get_running_loop()
 *     future = loop.create_future()
 *     h = loop.call_later(delay, futures._set_result_unless_cancelled, future, result)
 *     try:
 *         return await future
 *     finally:
 *         h.cancel() */
static coro_status sleep_step(coro_t *c)
{
    sleep_t *s = (sleep_t *)c;
    loop_t *loop = running_loop_of(c);
    CORO_BEGIN(c);
    if (isnan(s->delay))
        CORO_RAISE(c, "ValueError", "sleep length must not be NaN");
    if (s->delay <= 0) {
        CORO_YIELD(c); /* __sleep0(): a bare yield */
        CORO_RETURN(c, NULL);
    }
    s->future = loop_create_future(loop);
    if (s->future == NULL)
        CORO_RAISE(c, "MemoryError", "%s", loop_error(loop));
    s->timer = loop_call_later(loop, s->delay, set_result_unless_cancelled, s->future);
    if (s->timer == NULL) {
        sleep_cleanup(c);
        CORO_RAISE(c, "MemoryError", "%s", loop_error(loop));
    }
    future_retain(s->future); /* the timer's handle holds the future */
    handle_set_release(s->timer, future_release_arg);
    handle_retain(s->timer); /* and the frame keeps the handle, to cancel it */
    CORO_TRY_AWAIT(c, s->future);
    sleep_cleanup(c); /* finally: h.cancel() */
    if (c->failed)
        CORO_RERAISE(c);
    CORO_RETURN(c, c->value);
    CORO_END(c);
}

coro_t *sleep_init(sleep_t *s, double delay)
{
    coro_init(&s->coro, sleep_step, "sleep", sleep_cleanup);
    s->delay = delay;
    s->future = NULL;
    s->timer = NULL;
    return &s->coro;
}
/* @end sleep */

/* @region cancel_and_wait */
/* def _release_waiter(waiter, *args):
 *     if not waiter.done():
 *         waiter.set_result(None) */
static void release_waiter(loop_t *loop, future_t *fut, void *waiter)
{
    (void)fut;
    if (!future_done(waiter) && future_set_result(waiter, NULL) < 0)
        loop_raise(loop, "MemoryError", "%s", loop_error(loop));
}

static void release_waiter_timer(loop_t *loop, void *waiter)
{
    release_waiter(loop, NULL, waiter);
}

static void cancel_and_wait_cleanup(coro_t *c)
{
    cancel_and_wait_t *w = (cancel_and_wait_t *)c;
    if (w->waiter != NULL) {
        future_remove_done_callback(w->fut, release_waiter, w->waiter);
        future_release(w->waiter);
        w->waiter = NULL;
    }
}

/* async def _cancel_and_wait(fut, loop):
 *     waiter = loop.create_future()
 *     cb = functools.partial(_release_waiter, waiter)
 *     fut.add_done_callback(cb)
 *     try:
 *         fut.cancel()
 *         await waiter
 *     finally:
 *         fut.remove_done_callback(cb) */
static coro_status cancel_and_wait_step(coro_t *c)
{
    cancel_and_wait_t *w = (cancel_and_wait_t *)c;
    loop_t *loop = future_get_loop(w->fut);
    CORO_BEGIN(c);
    w->waiter = loop_create_future(loop);
    if (w->waiter == NULL)
        CORO_RAISE(c, "MemoryError", "%s", loop_error(loop));
    future_retain(w->waiter); /* the callback holds the waiter */
    if (future_add_done_callback_owned(w->fut, release_waiter, w->waiter, future_release_arg,
                                       "_release_waiter") < 0) {
        future_release(w->waiter);
        future_release(w->waiter);
        w->waiter = NULL;
        CORO_RAISE(c, "MemoryError", "%s", loop_error(loop));
    }
    future_cancel(w->fut, NULL);
    CORO_TRY_AWAIT(c, w->waiter);
    cancel_and_wait_cleanup(c); /* finally: fut.remove_done_callback(cb) */
    if (c->failed)
        CORO_RERAISE(c);
    CORO_END(c);
}

coro_t *cancel_and_wait_init(cancel_and_wait_t *w, future_t *fut)
{
    coro_init(&w->coro, cancel_and_wait_step, "_cancel_and_wait", cancel_and_wait_cleanup);
    w->fut = fut;
    w->waiter = NULL;
    return &w->coro;
}
/* @end cancel_and_wait */

/* @region wait_for */
/* finally: timeout_handle.cancel() -- and drop what the frame holds. */
static void wait_for_cleanup(coro_t *c)
{
    wait_for_t *w = (wait_for_t *)c;
    if (w->timeout_handle != NULL) {
        handle_cancel(w->timeout_handle);
        handle_release(w->timeout_handle);
        w->timeout_handle = NULL;
    }
    if (w->waiter != NULL) {
        future_remove_done_callback(w->fut, release_waiter, w->waiter);
        future_release(w->waiter);
        w->waiter = NULL;
    }
    if (w->holds_fut) {
        w->holds_fut = 0;
        future_release(w->fut);
    }
}

/* return fut.result(): the outcome of fut becomes the coroutine's. */
static void take_result(coro_t *c, future_t *fut)
{
    c->failed = future_result(fut, &c->value, &c->error) < 0;
}

/* The lines of tasks.py's wait_for (3.11) are quoted at each step. */
static coro_status wait_for_step(coro_t *c)
{
    wait_for_t *w = (wait_for_t *)c;
    loop_t *loop = future_get_loop(w->fut);
    CORO_BEGIN(c);
    if (loop == NULL)
        CORO_RAISE(c, "TypeError", "wait_for() needs a future");
    if (isnan(w->timeout))
        CORO_RAISE(c, "ValueError", "wait_for() timeout must not be NaN");
    future_retain(w->fut);
    w->holds_fut = 1;

    /* if timeout <= 0:
     *     if fut.done():
     *         return fut.result()
     *     await _cancel_and_wait(fut, loop=loop)
     *     try:
     *         return fut.result()
     *     except exceptions.CancelledError as exc:
     *         raise exceptions.TimeoutError() from exc */
    if (w->timeout <= 0) {
        if (future_done(w->fut)) {
            take_result(c, w->fut);
            goto finish;
        }
        CORO_TRY_CALL(c, cancel_and_wait_init(&w->cancel_and_wait, w->fut));
        if (c->failed)
            goto finish;
        goto result_or_timeout;
    }

    /* waiter = loop.create_future()
     * timeout_handle = loop.call_later(timeout, _release_waiter, waiter)
     * cb = functools.partial(_release_waiter, waiter)
     * fut.add_done_callback(cb) */
    w->waiter = loop_create_future(loop);
    if (w->waiter == NULL)
        goto out_of_memory;
    w->timeout_handle = loop_call_later(loop, w->timeout, release_waiter_timer, w->waiter);
    if (w->timeout_handle == NULL)
        goto out_of_memory;
    future_retain(w->waiter); /* the timer's handle holds the waiter */
    handle_set_release(w->timeout_handle, future_release_arg);
    handle_retain(w->timeout_handle);
    future_retain(w->waiter); /* and so does fut's callback */
    if (future_add_done_callback_owned(w->fut, release_waiter, w->waiter, future_release_arg,
                                       "_release_waiter") < 0) {
        future_release(w->waiter);
        goto out_of_memory;
    }

    /* try:
     *     await waiter
     * except exceptions.CancelledError:
     *     if fut.done():
     *         return fut.result()
     *     else:
     *         fut.remove_done_callback(cb)
     *         await _cancel_and_wait(fut, loop=loop)
     *         raise */
    CORO_TRY_AWAIT(c, w->waiter);
    if (c->failed) {
        if (future_done(w->fut)) {
            take_result(c, w->fut);
            goto finish;
        }
        future_remove_done_callback(w->fut, release_waiter, w->waiter);
        w->cancelled = 1;
        w->raised = c->error;
        CORO_TRY_CALL(c, cancel_and_wait_init(&w->cancel_and_wait, w->fut));
        if (!c->failed) { /* raise: the CancelledError caught above */
            c->failed = 1;
            c->error = w->raised;
        }
        goto finish;
    }

    /* if fut.done():
     *     return fut.result()
     * else:
     *     fut.remove_done_callback(cb)
     *     await _cancel_and_wait(fut, loop=loop)
     *     try:
     *         return fut.result()
     *     except exceptions.CancelledError as exc:
     *         raise exceptions.TimeoutError() from exc */
    if (future_done(w->fut)) {
        take_result(c, w->fut);
        goto finish;
    }
    future_remove_done_callback(w->fut, release_waiter, w->waiter);
    CORO_TRY_CALL(c, cancel_and_wait_init(&w->cancel_and_wait, w->fut));
    if (c->failed)
        goto finish;

result_or_timeout:
    take_result(c, w->fut);
    if (c->failed && strcmp(c->error.type, "CancelledError") == 0)
        exception_set(&c->error, "TimeoutError", "");
    goto finish;

out_of_memory:
    c->failed = 1;
    exception_set(&c->error, "MemoryError", loop_error(loop));

finish:
    /* finally: timeout_handle.cancel() */
    wait_for_cleanup(c);
    c->state = -1;
    return c->failed ? CORO_RAISED : CORO_RETURNED;
    CORO_END(c);
}

coro_t *wait_for_init(wait_for_t *w, future_t *fut, double timeout)
{
    memset(w, 0, sizeof *w);
    coro_init(&w->coro, wait_for_step, "wait_for", wait_for_cleanup);
    w->fut = fut;
    w->timeout = timeout;
    return &w->coro;
}
/* @end wait_for */
