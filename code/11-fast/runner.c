/* runner.c -- chapter 09: loop.run_until_complete() and asyncio.run()
 * (see task.h): base_events.py's run_until_complete, runners.py's Runner
 * (run, close) and _cancel_all_tasks, step for step.
 */
#define _POSIX_C_SOURCE 200809L
#include "future_private.h"
#include "executor.h" /* chapter 10: shutdown_default_executor */
#include "policy.h"   /* chapter 10: the loop of this thread */

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
static int cancel_all_tasks(loop_t *loop)
{
    size_t n = loop_all_tasks(loop, NULL, 0);
    if (n == 0)
        return 0;
    task_t **to_cancel = malloc(n * sizeof *to_cancel);
    future_t **children = malloc(n * sizeof *children);
    if (to_cancel == NULL || children == NULL) {
        free(to_cancel);
        free(children);
        return 0; /* out of memory: loop_close() drops them, as pending */
    }
    loop_all_tasks(loop, to_cancel, n);
    for (size_t i = 0; i < n; i++) {
        task_retain(to_cancel[i]);
        children[i] = task_future(to_cancel[i]);
    }
    for (size_t i = 0; i < n; i++)
        task_cancel(to_cancel[i], NULL);
    future_t *gathered = loop_gather(loop, children, n, 1);
    int rc = 0;
    if (gathered != NULL) {
        rc = loop_run_until_complete(loop, gathered);
        future_release(gathered);
    }
    for (size_t i = 0; rc < 0 && i < n; i++) /* it raised: the rest is skipped */
        task_release(to_cancel[i]);
    for (size_t i = 0; rc == 0 && i < n; i++) {
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
    return rc;
}
/* @end cancel_all_tasks */

/* @region close */
/* loop.shutdown_asyncgens(): this loop has no async generators, and in
 * CPython, with none, it returns at once.  It is run all the same, as a
 * task: it costs the ticks (and the task name) it costs in CPython, so
 * that a program's trace ends as CPython's does.  Chapter 10: the loop has
 * an executor now, and shutdown_default_executor is the real coroutine
 * (bridge.c); with no default executor it too returns at once. */
static coro_status return_at_once(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_END(c);
}

static void free_coro(coro_t *c)
{
    free(c);
}

/* loop.run_until_complete(coro): coro on the heap, so that if the loop
 * stops before it ran, the task outlives this function until loop_close()
 * drops it. */
static int run_coroutine(loop_t *loop, coro_t *coro)
{
    if (coro == NULL)
        return -1;
    task_t *t = loop_create_task(loop, coro);
    if (t == NULL)
        return -1;
    int rc = loop_run_until_complete(loop, task_future(t));
    task_release(t);
    return rc;
}

static int run_trivial(loop_t *loop, const char *name)
{
    coro_t *coro = malloc(sizeof *coro);
    if (coro == NULL)
        return loop_fail(loop, ENOMEM, "out of memory for %s()", name);
    return run_coroutine(loop, coro_init(coro, return_at_once, name, free_coro));
}

/* Runner.close():
 *     try:
 *         _cancel_all_tasks(loop)
 *         loop.run_until_complete(loop.shutdown_asyncgens())
 *         loop.run_until_complete(loop.shutdown_default_executor())
 *     finally:
 *         if self._set_event_loop:
 *             events.set_event_loop(None)
 *         loop.close()
 * A step that raises (a KeyboardInterrupt from a callback, a stop() that
 * ends a run_until_complete early) skips the ones after it.  Returns 0,
 * or -1 with errno and loop_error() as the step that failed left them. */
static int runner_close(loop_t *loop, int set_event_loop)
{
    int rc = cancel_all_tasks(loop);
    if (rc == 0)
        rc = run_trivial(loop, "BaseEventLoop.shutdown_asyncgens");
    if (rc == 0)
        rc = run_coroutine(loop, loop_shutdown_default_executor(loop));
    int err = errno;
    if (set_event_loop)
        loop_set_event_loop(NULL);
    loop_close(loop);
    errno = err;
    return rc;
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

/* The error a failed run_until_complete() left in loop_error(), as the
 * exception it stands for: KeyboardInterrupt, SystemExit, or the
 * RuntimeError of "Event loop stopped before Future completed.". */
static void run_error(loop_t *loop, int err, loop_exception_t *error)
{
    const char *why = loop_error(loop); /* "KeyboardInterrupt: MESSAGE" (handler.c) */
    const char *types[] = {LOOP_KEYBOARD_INTERRUPT, LOOP_SYSTEM_EXIT};
    for (size_t i = 0; err == EINTR && i < 2; i++) {
        size_t len = strlen(types[i]);
        if (strncmp(why, types[i], len) == 0 && why[len] == ':') {
            exception_set(error, types[i], why + len + (why[len + 1] == ' ' ? 2 : 1));
            return;
        }
    }
    exception_set(error, "RuntimeError", why);
}

/* Runner.run(main), then Runner.close().  *closed_rc: what close() did
 * (-1: it raised, and *close_error says what). */
static int runner_run(loop_t *loop, int set_event_loop, coro_t *main, void **result,
                      loop_exception_t *error, int *close_rc, loop_exception_t *close_error)
{
    loop_exception_t scratch;
    *close_rc = 0;
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
        char why[LOOP_EXCEPTION_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", loop_error(loop));
        runner_close(loop, set_event_loop);
        return refuse(error, err, why);
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
        if (rc < 0) /* main raised: EINTR for KeyboardInterrupt, else ECANCELED */
            err = strcmp(error->type, LOOP_KEYBOARD_INTERRUPT) == 0 ||
                          strcmp(error->type, LOOP_SYSTEM_EXIT) == 0
                      ? EINTR
                      : ECANCELED;
    } else {
        /* the run raised: KeyboardInterrupt (EINTR), or the loop stopped early */
        run_error(loop, err, error);
    }
    /* finally: signal.signal(signal.SIGINT, signal.default_int_handler) */
    if (sigint_installed)
        loop_remove_signal_handler(loop, SIGINT);
    task_release(task);
    if (runner_close(loop, set_event_loop) < 0) {
        *close_rc = -1;
        run_error(loop, errno, close_error);
    }
    if (rc < 0)
        errno = err;
    return rc < 0 ? -1 : 0;
}

/* An error raised by close() reaches the caller, as it does in Python
 * whichever way the runner is used (`with Runner() as r: return
 * r.run(main)`, or r.run(main) then r.close()): it replaces main's
 * outcome, the one error a C caller can be given. */
static int close_error_wins(int rc, int close_rc, const loop_exception_t *close_error,
                            loop_exception_t *error)
{
    if (close_rc == 0)
        return rc;
    if (error != NULL)
        *error = *close_error;
    errno = strcmp(close_error->type, "RuntimeError") == 0 ? EAGAIN : EINTR;
    return -1;
}

int loop_run_main_on(loop_t *loop, coro_t *main, void **result, loop_exception_t *error)
{
    int close_rc;
    loop_exception_t close_error;
    int rc = runner_run(loop, 0, main, result, error, &close_rc, &close_error);
    return close_error_wins(rc, close_rc, &close_error, error);
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
    /* Runner._lazy_init(), with no loop_factory:
     *     self._loop = events.new_event_loop()
     *     if not self._set_event_loop:
     *         events.set_event_loop(self._loop)
     *         self._set_event_loop = True */
    loop_t *loop = loop_new_event_loop();
    if (loop == NULL) {
        int err = errno;
        if (main->release != NULL)
            main->release(main);
        return refuse(error, err, "cannot make a loop");
    }
    /* with Runner(debug=debug) as runner:
     *     return runner.run(main)
     * An error raised by close() (Runner.__exit__) replaces run()'s outcome. */
    loop_set_event_loop(loop);
    int close_rc;
    loop_exception_t close_error;
    int rc = runner_run(loop, 1, main, result, error, &close_rc, &close_error);
    rc = close_error_wins(rc, close_rc, &close_error, error);
    int err = errno;
    loop_free(loop);
    errno = err;
    return rc;
}
/* @end run */
