/* runner.c -- chapter 09: loop.run_until_complete() and asyncio.run()
 * (see task.h): base_events.py's run_until_complete, runners.py's Runner
 * (run, close) and _cancel_all_tasks, step for step.
 */
#define _POSIX_C_SOURCE 200809L
#include "future_private.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @region run_until_complete */
/* def _run_until_complete_cb(fut):
 *     if not fut.cancelled():
 *         exc = fut.exception()
 *         if isinstance(exc, (SystemExit, KeyboardInterrupt)):
 *             # run_forever() already finished, no need to stop it.
 *             return
 *     futures._get_loop(fut).stop() */
static void run_until_complete_cb(loop_t *loop, future_t *fut, void *arg)
{
    (void)arg;
    loop_exception_t exc;
    if (!future_cancelled(fut) && future_exception(fut, &exc) == 1 &&
        (strcmp(exc.type, LOOP_KEYBOARD_INTERRUPT) == 0 || strcmp(exc.type, LOOP_SYSTEM_EXIT) == 0))
        return;
    loop_stop(loop);
}

int loop_run_until_complete(loop_t *loop, future_t *fut)
{
    if (loop == NULL || fut == NULL) {
        errno = EINVAL;
        return -1;
    }
    /* self._check_closed(); self._check_running() */
    if (loop_is_closed(loop))
        return loop_fail(loop, EINVAL, "Event loop is closed");
    if (loop_is_running(loop))
        return loop_fail(loop, EBUSY, "This event loop is already running");
    if (loop_get_running_loop() != NULL)
        return loop_fail(loop, EBUSY, "Cannot run the event loop while another loop is running");
    if (fut->loop != loop) /* tasks.ensure_future(future, loop=self) */
        return loop_fail(loop, EINVAL, "The future belongs to a different loop than the one "
                                       "specified as the loop argument");
    /* future.add_done_callback(_run_until_complete_cb)
     * try:
     *     self.run_forever()
     * finally:
     *     future.remove_done_callback(_run_until_complete_cb) */
    if (future_add_done_callback_owned(fut, run_until_complete_cb, NULL, NULL,
                                       "_run_until_complete_cb") < 0)
        return -1;
    future_retain(fut); /* the caller may let go of it in a callback */
    int rc = loop_run_forever(loop);
    int err = errno;
    future_remove_done_callback(fut, run_until_complete_cb, NULL);
    int done = future_done(fut);
    future_release(fut);
    if (rc < 0) {
        errno = err; /* loop_error() still says why */
        return -1;
    }
    /* if not future.done():
     *     raise RuntimeError('Event loop stopped before Future completed.') */
    if (!done)
        return loop_fail(loop, EAGAIN, "Event loop stopped before Future completed.");
    return 0;
}
/* @end run_until_complete */

/* @region cancel_all_tasks */
/* def _cancel_all_tasks(loop):
 *     to_cancel = tasks.all_tasks(loop)
 *     if not to_cancel: return
 *     for task in to_cancel: task.cancel()
 *     loop.run_until_complete(tasks.gather(*to_cancel, return_exceptions=True))
 *     for task in to_cancel:
 *         if task.cancelled(): continue
 *         if task.exception() is not None:
 *             loop.call_exception_handler({
 *                 'message': 'unhandled exception during asyncio.run() shutdown',
 *                 'exception': task.exception(), 'task': task}) */
static void cancel_all_tasks(loop_t *loop)
{
    size_t n = loop_all_tasks(loop, NULL, 0);
    if (n == 0)
        return;
    task_t **to_cancel = malloc(n * sizeof *to_cancel);
    future_t **children = malloc(n * sizeof *children);
    if (to_cancel == NULL || children == NULL) {
        free(to_cancel);
        free(children);
        return; /* out of memory: loop_close() drops them, as pending */
    }
    loop_all_tasks(loop, to_cancel, n);
    for (size_t i = 0; i < n; i++) {
        task_retain(to_cancel[i]);
        children[i] = task_future(to_cancel[i]);
    }
    for (size_t i = 0; i < n; i++)
        task_cancel(to_cancel[i], NULL);
    future_t *gathered = loop_gather(loop, children, n, 1);
    if (gathered != NULL) {
        loop_run_until_complete(loop, gathered);
        future_release(gathered);
    }
    for (size_t i = 0; i < n; i++) {
        future_t *f = children[i];
        loop_exception_t exc;
        if (!future_cancelled(f) && future_exception(f, &exc) == 1) {
            loop_context_t context = {
                .message = "unhandled exception during asyncio.run() shutdown",
                .exception = &exc,
                .task = to_cancel[i],
            };
            loop_call_exception_handler(loop, &context);
        }
        task_release(to_cancel[i]);
    }
    free(children);
    free(to_cancel);
}
/* @end cancel_all_tasks */

/* @region close */
/* loop.shutdown_asyncgens() and loop.shutdown_default_executor(): this
 * loop has neither async generators nor an executor, and in CPython, with
 * none, each returns at once.  They are run all the same, as tasks:
 * each costs the ticks (and the task name) it costs in CPython, so that
 * a program's trace ends as CPython's does. */
static coro_status return_at_once(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_END(c);
}

static void free_coro(coro_t *c)
{
    free(c);
}

static void run_trivial(loop_t *loop, const char *name)
{
    /* On the heap: if the loop stops before it ran, the task outlives
     * this function until loop_close() drops it. */
    coro_t *coro = malloc(sizeof *coro);
    if (coro == NULL)
        return;
    coro_init(coro, return_at_once, name, free_coro);
    task_t *t = loop_create_task(loop, coro);
    if (t == NULL)
        return;
    loop_run_until_complete(loop, task_future(t));
    task_release(t);
}

/* Runner.close():
 *     _cancel_all_tasks(loop)
 *     loop.run_until_complete(loop.shutdown_asyncgens())
 *     loop.run_until_complete(loop.shutdown_default_executor())
 *     loop.close() */
static void runner_close(loop_t *loop)
{
    cancel_all_tasks(loop);
    run_trivial(loop, "BaseEventLoop.shutdown_asyncgens");
    run_trivial(loop, "BaseEventLoop.shutdown_default_executor");
    loop_close(loop);
}
/* @end close */

/* @region run */
typedef struct runner {
    task_t *main_task;
    int interrupt_count;
} runner_t;

static void wake(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

/* Runner._on_sigint:
 *     self._interrupt_count += 1
 *     if self._interrupt_count == 1 and not main_task.done():
 *         main_task.cancel()
 *         # wakeup loop if it is blocked by select() with long timeout
 *         self._loop.call_soon_threadsafe(lambda: None)
 *         return
 *     raise KeyboardInterrupt() */
static void on_sigint(loop_t *loop, void *arg)
{
    runner_t *r = arg;
    r->interrupt_count++;
    if (r->interrupt_count == 1 && !future_done(task_future(r->main_task))) {
        task_cancel(r->main_task, NULL);
        loop_call_soon_threadsafe(loop, wake, NULL);
        return;
    }
    loop_raise(loop, LOOP_KEYBOARD_INTERRUPT, "%s", "");
}

/* Is SIGINT's disposition the default?  (CPython: `signal.getsignal(
 * signal.SIGINT) is signal.default_int_handler`: nobody else handles it.) */
static int sigint_is_default(void)
{
    struct sigaction sa;
    return sigaction(SIGINT, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL;
}

static int refuse(loop_exception_t *error, int err, const char *message)
{
    if (error != NULL)
        exception_set(error, "RuntimeError", message);
    errno = err;
    return -1;
}

int loop_run_main_on(loop_t *loop, coro_t *main, void **result, loop_exception_t *error)
{
    loop_exception_t scratch;
    if (error == NULL)
        error = &scratch;
    if (loop == NULL || main == NULL) {
        if (main != NULL && main->release != NULL)
            main->release(main);
        return refuse(error, EINVAL, "loop_run_main_on: NULL argument");
    }
    /* if events._get_running_loop() is not None:
     *     raise RuntimeError("Runner.run() cannot be called from a running event loop") */
    if (loop_get_running_loop() != NULL) {
        if (main->release != NULL)
            main->release(main);
        loop_fail(loop, EBUSY, "Runner.run() cannot be called from a running event loop");
        return refuse(error, EBUSY, loop_error(loop));
    }
    /* task = self._loop.create_task(coro, context=context) */
    task_t *task = loop_create_task(loop, main);
    if (task == NULL) {
        int err = errno;
        runner_close(loop);
        return refuse(error, err, loop_error(loop));
    }
    /* Ctrl-C cancels the main task: the handler goes in only if nobody
     * else handles SIGINT, and only if this loop may handle signals. */
    runner_t r = {.main_task = task, .interrupt_count = 0};
    int sigint_installed = sigint_is_default() &&
                           loop_add_signal_handler(loop, SIGINT, on_sigint, &r) == 0;
    /* try:
     *     return self._loop.run_until_complete(task)
     * except exceptions.CancelledError:
     *     if self._interrupt_count > 0:
     *         uncancel = getattr(task, "uncancel", None)
     *         if uncancel is not None and uncancel() == 0:
     *             raise KeyboardInterrupt()
     *     raise  # CancelledError */
    int rc = loop_run_until_complete(loop, task_future(task));
    int err = errno;
    if (rc == 0) {
        void *value = NULL;
        rc = future_result(task_future(task), &value, error);
        if (rc == 0 && result != NULL)
            *result = value;
        if (rc < 0 && strcmp(error->type, "CancelledError") == 0 && r.interrupt_count > 0 &&
            task_uncancel(task) == 0)
            exception_set(error, LOOP_KEYBOARD_INTERRUPT, "");
        err = rc < 0 && strcmp(error->type, LOOP_KEYBOARD_INTERRUPT) == 0 ? EINTR : ECANCELED;
    } else {
        /* the loop stopped: KeyboardInterrupt (EINTR), or stopped early */
        const char *why = loop_error(loop);
        if (err == EINTR && strncmp(why, "KeyboardInterrupt", 17) == 0)
            exception_set(error, LOOP_KEYBOARD_INTERRUPT, "");
        else if (err == EINTR && strncmp(why, "SystemExit", 10) == 0)
            exception_set(error, LOOP_SYSTEM_EXIT, "");
        else
            exception_set(error, "RuntimeError", why);
        if (future_done(task_future(task)) && !future_cancelled(task_future(task)))
            future_exception(task_future(task), NULL); /* consumed: nobody else sees it */
    }
    /* finally: signal.signal(signal.SIGINT, signal.default_int_handler) */
    if (sigint_installed)
        loop_remove_signal_handler(loop, SIGINT);
    task_release(task);
    runner_close(loop);
    if (rc < 0)
        errno = err;
    return rc < 0 ? -1 : 0;
}

int loop_run_main(coro_t *main, void **result, loop_exception_t *error)
{
    /* if events._get_running_loop() is not None:
     *     raise RuntimeError("asyncio.run() cannot be called from a running event loop") */
    if (loop_get_running_loop() != NULL) {
        if (main != NULL && main->release != NULL)
            main->release(main);
        return refuse(error, EBUSY, "asyncio.run() cannot be called from a running event loop");
    }
    if (main == NULL)
        return refuse(error, EINVAL, "loop_run_main: main is NULL");
    loop_t *loop = loop_new();
    if (loop == NULL) {
        int err = errno;
        if (main->release != NULL)
            main->release(main);
        return refuse(error, err, "cannot make a loop");
    }
    int rc = loop_run_main_on(loop, main, result, error);
    int err = errno;
    loop_free(loop);
    errno = err;
    return rc;
}
/* @end run */
