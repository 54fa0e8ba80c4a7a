/* executor.h -- chapter 10: threads meet tasks.
 *
 * Three things of CPython 3.11, in C:
 *
 *   cfuture_t     concurrent.futures.Future: a future that any thread may
 *                 complete, wait on (with a timeout), cancel, or hang a
 *                 callback on.  A mutex and a condition variable, where
 *                 asyncio's future_t (future.h) has neither: that one
 *                 belongs to its loop's thread.
 *   executor_t    concurrent.futures.ThreadPoolExecutor: a FIFO work queue
 *                 and up to max_workers threads, started one at a time as
 *                 jobs arrive and no worker is idle (_adjust_thread_count).
 *   the bridge    loop_run_in_executor() (base_events.run_in_executor:
 *                 submit, then futures.wrap_future), loop_wrap_future()
 *                 and _chain_future's two directions, and
 *                 loop_run_coroutine_threadsafe() (tasks.py).
 *
 * Thread-safety: every cfuture_* and executor_* function may be called from
 * any thread.  loop_run_in_executor(), loop_wrap_future(),
 * loop_set_default_executor() and the shutdown coroutine belong to the
 * loop's thread, as every loop_* function but loop_call_soon_threadsafe()
 * does; loop_run_coroutine_threadsafe() is for any thread, between
 * loop_new() and loop_free() (as loop_call_soon_threadsafe(): loop.h).
 * What the loop's own threads may still do when it is freed -- a job that
 * finishes late, the shutdown thread -- is loop_free()'s business (loop.h):
 * nothing of theirs reaches a freed loop.
 *
 * Errors: a refusal returns NULL / -1 with errno set and a message in
 * executor_last_error() -- kept per thread, since these functions have no
 * loop whose loop_error() could hold it.  The loop_* functions here put
 * their message in loop_error(loop) as well. */
#ifndef EXECUTOR_H
#define EXECUTOR_H

#include "task.h"

/* ------------------------------------------------------------ cfuture */
typedef struct cfuture cfuture_t;

/* concurrent.futures' five states; FINISHED carries a result or an error. */
typedef enum cfuture_state {
    CFUTURE_PENDING,
    CFUTURE_RUNNING,
    CFUTURE_CANCELLED,
    CFUTURE_CANCELLED_AND_NOTIFIED,
    CFUTURE_FINISHED
} cfuture_state;

/* Future(): pending, one reference (the caller's). NULL with ENOMEM.
 * The count is kept under the future's mutex: owners in any thread may
 * retain and release it. */
cfuture_t *cfuture_new(void);
void cfuture_retain(cfuture_t *f);  /* NULL is ignored */
void cfuture_release(cfuture_t *f); /* NULL is ignored */

cfuture_state cfuture_get_state(cfuture_t *f);
int cfuture_cancelled(cfuture_t *f); /* CANCELLED or CANCELLED_AND_NOTIFIED */
int cfuture_running(cfuture_t *f);
int cfuture_done(cfuture_t *f);      /* cancelled or finished */

/* cancel(): 1 if the future is (now) cancelled; 0 if it is RUNNING or
 * FINISHED, which cannot be cancelled.  A new cancellation wakes every
 * waiter and runs the done callbacks, in this thread. */
int cfuture_cancel(cfuture_t *f);

/* set_running_or_notify_cancel(): what a worker calls before it runs the
 * job.  1: the future was PENDING and is now RUNNING.  0: it was cancelled
 * (it becomes CANCELLED_AND_NOTIFIED): do not run the job.  -1 with EINVAL
 * in any other state ("Future in unexpected state"). */
int cfuture_set_running_or_notify_cancel(cfuture_t *f);

/* set_result / set_exception: FINISHED; wake the waiters; run the done
 * callbacks in registration order, in this thread.  -1 with EINVAL if the
 * future is cancelled or finished: "invalid state" as CPython's
 * InvalidStateError('CANCELLED: <Future ...>') says it
 * ("FINISHED: <Future at 0x... state=finished>" is CPython's; the message
 * here is "FINISHED: <Future state=finished>", without an address). */
int cfuture_set_result(cfuture_t *f, void *value);
int cfuture_set_exception(cfuture_t *f, const loop_exception_t *error);

/* result(timeout): wait until done, at most timeout seconds (timeout < 0:
 * forever, Python's None; NaN is refused with EINVAL).  0 and *value if it
 * finished with a result.  -1 otherwise, with *error (may be NULL):
 * CancelledError (ECANCELED), TimeoutError with an empty message
 * (ETIMEDOUT: the future is untouched and may still finish), or the job's
 * own error (EIO). */
int cfuture_result(cfuture_t *f, double timeout, void **value, loop_exception_t *error);

/* exception(timeout): 1 and *error if it finished with an error, 0 if
 * with a result; -1 on cancellation (ECANCELED) or timeout (ETIMEDOUT),
 * *error saying which, as result() does. */
int cfuture_exception(cfuture_t *f, double timeout, loop_exception_t *error);

/* add_done_callback(fn): fn(f, arg) runs in the thread that completes or
 * cancels the future, or at once in this thread if it is already done
 * (concurrent.futures' rule, not asyncio's call_soon).  -1 ENOMEM / EINVAL. */
typedef void (*cfuture_callback)(cfuture_t *f, void *arg);
int cfuture_add_done_callback(cfuture_t *f, cfuture_callback fn, void *arg);

/* ----------------------------------------------------------- executor */
typedef struct executor executor_t;

/* A job: run in a worker thread; 0 with *result, or -1 with *error filled
 * (its type and message: what the job raised). */
typedef int (*executor_job)(void *arg, void **result, loop_exception_t *error);

/* ThreadPoolExecutor(max_workers, thread_name_prefix): max_workers 0 means
 * CPython's default, min(32, CPUs + 4).  Workers are named PREFIX_N (N from
 * 0, as CPython's "asyncio_0") with pthread_setname_np.  NULL with ENOMEM. */
executor_t *executor_new(unsigned max_workers, const char *thread_name_prefix);

/* submit(fn, arg): a cfuture for the job (one reference, the caller's), or
 * NULL: EINVAL (fn NULL), ENOMEM, EAGAIN (no thread could be started and
 * none runs), or EPIPE after shutdown: "cannot schedule new futures after
 * shutdown". */
cfuture_t *executor_submit(executor_t *ex, executor_job fn, void *arg);

/* shutdown(wait, cancel_futures): no new jobs from now on.  cancel_futures:
 * the jobs still queued are cancelled (their futures CANCELLED, callbacks
 * run, in this thread).  Without it, the jobs queued still run: a worker
 * ends only when the queue is empty.  wait: return only when every worker
 * has ended (every job has finished).  Calling it again is harmless, from
 * any number of threads.  From one of the executor's own jobs, wait=1
 * would wait for itself: -1 with EDEADLK ("cannot join current thread",
 * as t.join() raises), the shutdown itself done, as in CPython, where
 * _shutdown is set before the join raises. */
int executor_shutdown(executor_t *ex, int wait, int cancel_futures);

unsigned executor_max_workers(executor_t *ex);
unsigned executor_threads(executor_t *ex); /* workers started so far */

/* shutdown(wait=1), then free.  NULL is ignored.  Not from one of its own
 * jobs; and after loop_free() of every loop it ran jobs for. */
void executor_free(executor_t *ex);

/* The message of this thread's last refusal by a cfuture_* / executor_* /
 * loop_run_coroutine_threadsafe() call ("" if none). */
const char *executor_last_error(void);

/* ------------------------------------------------------------- bridge */
/* @region run_in_executor */
/* loop.run_in_executor(executor, fn, arg): submit the job to executor (NULL:
 * the loop's default executor, a ThreadPoolExecutor with prefix "asyncio"
 * created on first use) and return an asyncio future of this loop, chained
 * to the job's cfuture (loop_wrap_future), one reference (the caller's).
 * The job's result comes home through loop_call_soon_threadsafe(); if the
 * loop is closed by then, it is dropped (CPython's _call_set_state).
 * Cancelling the returned future cancels the job if it has not started.
 * NULL, with loop_error(): "Event loop is closed" (EBADF), "Executor
 * shutdown has been called" (EPIPE: default executor only, after
 * loop_shutdown_default_executor or loop_close), the executor's own
 * refusals, EINVAL (fn NULL), ENOMEM. */
future_t *loop_run_in_executor(loop_t *loop, executor_t *executor, executor_job fn, void *arg);
/* @end run_in_executor */

/* loop.set_default_executor(executor): the executor stays the caller's (to
 * free after loop_free); loop_close() shuts it down with wait=0, as CPython
 * does.  -1 EINVAL (NULL). */
int loop_set_default_executor(loop_t *loop, executor_t *executor);

/* futures.wrap_future(cf, loop=loop): an asyncio future of this loop that
 * completes as cf does (through call_soon_threadsafe), and whose
 * cancellation cancels cf.  One reference, the caller's; cf is retained
 * until it is done. */
future_t *loop_wrap_future(loop_t *loop, cfuture_t *cf);

/* @region shutdown_default_executor */
/* loop.shutdown_default_executor(): a coroutine.  From its first step on,
 * the default executor may not be used again ("Executor shutdown has been
 * called"); if there is one, a thread shuts it down with wait=1 and
 * completes a future through call_soon_threadsafe, which the coroutine
 * awaits; then the thread is joined. */
typedef struct shutdown_default_executor {
    coro_t coro;
    loop_t *loop;
    future_t *future;
    int has_thread;
    struct shutdown_thread *thread; /* the thread and its link home (bridge.c) */
} shutdown_default_executor_t;

coro_t *shutdown_default_executor_init(shutdown_default_executor_t *s, loop_t *loop);

/* The same frame on the heap, for a caller that has no frame to put it in
 * (the runner): its release frees it.  NULL with ENOMEM. */
coro_t *loop_shutdown_default_executor(loop_t *loop);
/* @end shutdown_default_executor */

/* @region run_coroutine_threadsafe */
/* asyncio.run_coroutine_threadsafe(coro, loop), for any thread but the
 * loop's own (which would deadlock waiting on the result): schedule, through
 * loop_call_soon_threadsafe(), a callback that wraps coro in a task of the
 * loop and chains the task to the returned cfuture (one reference, the
 * caller's).  The caller may wait on it with cfuture_result(timeout), or
 * cancel it (the task is then cancelled on the loop's thread).  NULL with
 * errno: EINVAL (NULL coro or loop), EBADF "Event loop is closed", ENOMEM;
 * coro is then untouched, still the caller's.  Once a cfuture is returned,
 * coro is the loop's: if the loop is closed before the callback runs, coro
 * is released and the cfuture cancelled, so no waiter hangs. */
cfuture_t *loop_run_coroutine_threadsafe(loop_t *loop, coro_t *coro);
/* @end run_coroutine_threadsafe */

#endif
