/* task.h -- chapter 09: asyncio.Task, and what is built on it.
 *
 * A task is a future that drives a coroutine (coro.h).  Creating it
 * schedules its first step with call_soon; each step (Task.__step) runs
 * the coroutine until it awaits something:
 *
 *   - a bare yield (asyncio.sleep(0)): the next step is call_soon'd;
 *   - a pending future: the task adds its wakeup as that future's done
 *     callback (Task.__wakeup), which steps it again when the future is
 *     done, with the future's result or error; a future that is done
 *     already does not suspend at all (Future.__await__: `if not
 *     self.done(): yield self`): the coroutine goes on in the same step;
 *   - the task itself: RuntimeError "Task cannot await on itself: <repr>"
 *     is thrown in at the next step;
 *   - another coroutine (CORO_CALL): it runs now, inside this step.
 *
 * When the coroutine returns, the task finishes with its value; when it
 * raises, with its error; when a CancelledError leaves it, the task is
 * cancelled.  cancel() cancels the future the task waits for, if any;
 * otherwise (or if that future refuses) it sets _must_cancel, and the
 * next step throws CancelledError into the coroutine, which may catch it.
 * Every rule and message is CPython 3.11's (Lib/asyncio/tasks.py).
 *
 * A task is a future: task_future() is the same object seen as one, and
 * every future_* call works on it (future_cancel is Task.cancel;
 * future_set_result / future_set_exception are refused with RuntimeError
 * "Task does not support set_result operation" / "... set_exception ...").
 * The loop's thread only.
 */
#ifndef TASK_H
#define TASK_H

#include "coro.h"
#include "future.h"

/* loop.create_task(coro): a task that will run coro, with one reference
 * (the caller's; the loop keeps its own while the task has a step
 * scheduled or waits for a future).  Goes through the task factory if one
 * is set (loop_set_task_factory), else task_new(loop, coro, NULL).  The
 * task owns coro from now on: coro->release (if any) is called when the
 * task is freed.  NULL with errno (EINVAL: NULL argument, a closed loop:
 * "Event loop is closed"; ENOMEM), and then coro is released too, as
 * CPython closes the coroutine of a task it could not create. */
task_t *loop_create_task(loop_t *loop, coro_t *coro);

/* Task(coro, loop=loop, name=name): what the default factory does.  name
 * NULL: "Task-N", N counting every task this process made. */
task_t *task_new(loop_t *loop, coro_t *coro, const char *name);

/* loop.set_task_factory(factory): make loop_create_task call
 * factory(loop, coro, ctx), which must return task_new(...)'s result (or
 * NULL with errno).  NULL restores the default. */
typedef task_t *(*loop_task_factory)(loop_t *loop, coro_t *coro, void *ctx);
void loop_set_task_factory(loop_t *loop, loop_task_factory factory, void *ctx);

future_t *task_future(task_t *t);  /* the task, as a future (no new reference) */
task_t *future_task(future_t *f);  /* the future as a task, or NULL if it is not one */
void task_retain(task_t *t);       /* = future_retain(task_future(t)) */
void task_release(task_t *t);      /* = future_release(task_future(t)) */

/* Task.cancel(msg): 1 if a cancellation is on its way (the task may still
 * catch it), 0 if the task was already done. */
int task_cancel(task_t *t, const char *msg);

/* Task.cancelling() / Task.uncancel() (3.11): how many cancellations were
 * asked for and not taken back; uncancel() takes one back (asyncio.run
 * uses it to tell Ctrl-C from a cancellation of main's own). */
unsigned task_cancelling(const task_t *t);
unsigned task_uncancel(task_t *t);

const char *task_get_name(const task_t *t);
int task_set_name(task_t *t, const char *name); /* -1 ENOMEM */
coro_t *task_get_coro(const task_t *t);

/* repr(task): "<Task pending name='T' coro=<main()> wait_for=<Future
 * pending cb=[Task.task_wakeup()]>>", "<Task finished name='T'
 * coro=<main()> exception=RuntimeError('x')>", ... as asyncio prints it. */
char *task_repr(const task_t *t, char *buf, size_t size);

/* asyncio.all_tasks(loop): the tasks of the loop not yet done, in the
 * order they were created (CPython's is a set: no order at all).  Fills
 * out[0 .. max) and returns how many there are (which may be more than
 * max: call again with a bigger array).  No references are added. */
size_t loop_all_tasks(loop_t *loop, task_t **out, size_t max);

/* asyncio.current_task(loop): the task whose step is running, or NULL. */
task_t *loop_current_task(loop_t *loop);

/* @region sleep */
/* asyncio.sleep(delay): a coroutine.  delay <= 0 is a bare yield; else a
 * future and a call_later that sets it (the timer is cancelled if the
 * sleeper is).  Its frame lives wherever the caller puts it (usually in
 * the caller's own frame); sleep_init sets it up and returns it, to await
 * with CORO_CALL.  NaN is refused when it runs (ValueError). */
typedef struct sleep {
    coro_t coro;
    double delay;
    future_t *future;
    handle_t *timer;
} sleep_t;

coro_t *sleep_init(sleep_t *s, double delay);
/* @end sleep */

/* @region cancel_and_wait */
/* tasks._cancel_and_wait(fut): cancel fut and wait until it is done (not
 * by awaiting fut itself, so that this wait can be cancelled on its own).
 * wait_for's helper; fut is borrowed from the caller. */
typedef struct cancel_and_wait {
    coro_t coro;
    future_t *fut;
    future_t *waiter;
} cancel_and_wait_t;

coro_t *cancel_and_wait_init(cancel_and_wait_t *w, future_t *fut);
/* @end cancel_and_wait */

/* @region wait_for */
/* asyncio.wait_for(fut, timeout), 3.11's rules: a coroutine that waits
 * for fut (a future or a task, retained while it waits) at most timeout
 * seconds; then it cancels fut, waits until fut is done, and raises
 * TimeoutError (unless fut finished anyway: its result).  If the waiter
 * itself is cancelled, fut is cancelled too.  timeout < 0: as 0; NaN:
 * refused when it runs (ValueError). */
typedef struct wait_for {
    coro_t coro;
    future_t *fut;
    double timeout;
    future_t *waiter;
    handle_t *timeout_handle;
    int cancelled; /* the waiter was cancelled: re-raise after waiting */
    loop_exception_t raised; /* ...this CancelledError */
    int holds_fut;   /* fut is retained (from the first step to the end) */
    cancel_and_wait_t cancel_and_wait; /* the frame of _cancel_and_wait(fut) */
} wait_for_t;

coro_t *wait_for_init(wait_for_t *w, future_t *fut, double timeout);
/* @end wait_for */

/* @region run */
/* loop.run_until_complete(fut): run the loop until fut is done (its done
 * callback stops the loop).  0 when fut is done: read its outcome with
 * future_result().  -1 with errno and loop_error(): "Event loop stopped
 * before Future completed." (EAGAIN: the loop stopped first), and every
 * refusal of loop_run_forever(); a KeyboardInterrupt (EINTR) leaves fut
 * as it is. */
int loop_run_until_complete(loop_t *loop, future_t *fut);

/* asyncio.run(main): a new loop; main runs as its main task until it is
 * done; then the tasks still pending are cancelled and the loop runs
 * until they are done (errors they finish with go to the exception
 * handler: "unhandled exception during asyncio.run() shutdown"); then
 * the loop is closed and freed.  SIGINT (Ctrl-C) cancels the main task
 * through chapter 08's signal handler (a second SIGINT: KeyboardInterrupt).
 * 0 and *result if main returned; -1 and *error if it raised or was
 * cancelled, or if the run was refused (main is then released unrun). */
int loop_run_main(coro_t *main, void **result, loop_exception_t *error);

/* asyncio.Runner(loop_factory=...).run(main) followed by its close(): the
 * same, on a loop the caller made (and frees after: it is closed).  For
 * both: if the shutdown raises (a callback's KeyboardInterrupt while the
 * tasks left are being cancelled, a stop that ends one of its runs
 * early), the steps after it are skipped, the loop is closed, and that
 * error is returned instead of main's outcome (-1, EINTR for a
 * KeyboardInterrupt, EAGAIN for the stop): Python never drops it, with
 * `with Runner() as r: return r.run(main)` or r.run() then r.close(). */
int loop_run_main_on(loop_t *loop, coro_t *main, void **result, loop_exception_t *error);
/* @end run */

#endif
