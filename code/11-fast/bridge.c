/* bridge.c -- chapter 10: where threads meet the loop.
 *
 *   loop_run_in_executor()          base_events.run_in_executor: submit the
 *                                   job, then wrap_future(cfuture, loop)
 *   loop_wrap_future()              futures.wrap_future and _chain_future's
 *                                   first direction: a cfuture's outcome
 *                                   comes home through call_soon_threadsafe
 *   loop_run_coroutine_threadsafe() tasks.run_coroutine_threadsafe, and
 *                                   _chain_future's other direction: a
 *                                   task's outcome goes out to a cfuture
 *   shutdown_default_executor       base_events.shutdown_default_executor
 *
 * The one thing C must add to CPython's code is lifetimes.  In Python a
 * worker thread that still holds a closure over the loop keeps the loop
 * alive; here loop_free() frees it.  So every link through which another
 * thread may still reach the loop is a *chain* (below): a small
 * reference-counted object with a mutex and a pointer to the loop, listed
 * in the loop.  A thread sends through a chain under its mutex; loop_free()
 * cuts every chain (the pointer becomes NULL, under the same mutex), so
 * once it returns no thread can reach the freed loop: what arrives later
 * -- a job of the caller's executor that finishes after the loop is gone --
 * is dropped, as CPython drops a result that arrives after close()
 * (_call_set_state: `if dest_loop.is_closed(): return`).
 *
 * The other rule: asyncio's futures and tasks belong to the loop's thread
 * (their reference counts are not atomic), so a chain holds them only on
 * that thread, and lets go of them there, when it is cut.  What crosses
 * threads is the cfuture (atomic) and the chain itself.
 */
#define _POSIX_C_SOURCE 200809L
#include "executor_private.h"
#include "future_private.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @region chain */
/* A link from other threads to a loop.  Owners (refs): the loop's list
 * while the chain is listed, and whoever may still use it -- a cfuture's
 * done callback, a handle in the ready deque, a coroutine frame.  The
 * loop's thread lists a chain and finishes it (chain_finish: cut, then
 * unlisted); any thread sends through it (chain_send). */
typedef struct chain {
    unsigned refs;                 /* refs_add / refs_drop (executor_private.h) */
    pthread_mutex_t lock;          /* guards `loop` against the cut */
    loop_t *loop;                  /* NULL once cut: nobody reaches the loop through it */
    bool listed;                   /* in the loop's list (loop's thread only) */
    struct chain *prev, *next;     /* the loop's list */
    void (*cut)(struct chain *c);  /* loop's thread, once: drop what is the loop's */
    void (*destroy)(struct chain *c); /* any thread: the last reference went */
} chain_t;

static void chain_init(chain_t *c, loop_t *loop, void (*cut)(chain_t *),
                       void (*destroy)(chain_t *))
{
    c->refs = 1; /* the creator's */
    pthread_mutex_init(&c->lock, NULL);
    c->loop = loop;
    c->listed = false;
    c->prev = c->next = NULL;
    c->cut = cut;
    c->destroy = destroy;
}

static void chain_retain(chain_t *c)
{
    refs_add(&c->refs);
}

static void chain_release(chain_t *c)
{
    if (refs_drop(&c->refs) == 0) {
        pthread_mutex_destroy(&c->lock);
        c->destroy(c);
    }
}

static void chain_release_arg(void *c)
{
    chain_release(c);
}

/* Loop's thread: into the loop's list, with the caller's reference. */
static void chain_list(chain_t *c)
{
    loop_executors_t *x = loop_executors(c->loop);
    c->listed = true;
    c->prev = NULL;
    c->next = x->chains;
    if (x->chains != NULL)
        x->chains->prev = c;
    x->chains = c;
}

/* Loop's thread: the chain has done its work (or the loop is going).
 * Cut it -- under its mutex, so a thread sending through it right now
 * finishes first, and none starts after -- drop what it holds of the loop,
 * and take it off the list (the list's reference goes).  Twice is harmless. */
static void chain_finish(chain_t *c)
{
    if (!c->listed)
        return;
    loop_t *loop = c->loop; /* only this thread writes it: no lock to read it */
    pthread_mutex_lock(&c->lock);
    c->loop = NULL;
    pthread_mutex_unlock(&c->lock);
    loop_executors_t *x = loop_executors(loop);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        x->chains = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    c->listed = false;
    if (c->cut != NULL)
        c->cut(c);
    chain_release(c);
}

/* Any thread: call_soon_threadsafe(fn, chain) on the chain's loop, the
 * handle holding a reference to the chain.  -1 if the chain is cut, the
 * loop closed (loop_call_soon_threadsafe refuses: the call is dropped, as
 * CPython's _call_set_state drops it) or out of memory. */
static int chain_send(chain_t *c, loop_callback fn)
{
    handle_t *h = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->loop != NULL) {
        chain_retain(c); /* the handle's */
        h = loop_call_soon_threadsafe_owned(c->loop, fn, c, chain_release_arg);
        if (h == NULL)
            chain_release(c); /* not the last: the caller holds one */
    }
    pthread_mutex_unlock(&c->lock);
    return h != NULL ? 0 : -1;
}
/* @end chain */

static void cfuture_release_arg(void *cf)
{
    cfuture_release(cf);
}

/* @region chain_future */
/* _chain_future(source, destination), source a cfuture, destination a
 * future of the loop (wrap_future's direction):
 *
 *     def _call_check_cancel(destination):        # destination's callback
 *         if destination.cancelled():
 *             if source_loop is None or source_loop is dest_loop:
 *                 source.cancel()
 *     def _call_set_state(source):                # source's callback
 *         if (destination.cancelled() and
 *                 dest_loop is not None and dest_loop.is_closed()):
 *             return
 *         ...
 *             if dest_loop.is_closed():
 *                 return
 *             dest_loop.call_soon_threadsafe(_set_state, destination, source)
 *     destination.add_done_callback(_call_check_cancel)
 *     source.add_done_callback(_call_set_state)
 *
 * _call_set_state runs in the thread that completes the cfuture (a worker).
 * It may not read the destination there (`destination.cancelled()`: that
 * future is the loop's thread's), so it just sends; _set_state, on the
 * loop's thread, does the looking. */
typedef struct bridge {
    chain_t chain;          /* first: a bridge_t * is a chain_t * */
    cfuture_t *source;      /* one reference */
    future_t *destination;  /* one reference, loop's thread only; NULL once cut */
} bridge_t;

static void bridge_cut(chain_t *c)
{
    bridge_t *b = (bridge_t *)c;
    future_t *destination = b->destination;
    b->destination = NULL;
    future_release(destination);
}

static void bridge_destroy(chain_t *c)
{
    bridge_t *b = (bridge_t *)c;
    cfuture_release(b->source);
    free(b);
}

/* _copy_future_state(source, dest), on the loop's thread:
 *     if dest.cancelled():
 *         return
 *     if source.cancelled():
 *         dest.cancel()
 *     else:
 *         exception = source.exception()
 *         if exception is not None:
 *             dest.set_exception(_convert_future_exc(exception))
 *         else:
 *             dest.set_result(source.result())
 * (_convert_future_exc turns concurrent.futures' CancelledError and
 * TimeoutError into asyncio's: here both are the same names already.) */
static void copy_future_state(loop_t *loop, cfuture_t *source, future_t *dest)
{
    if (future_cancelled(dest))
        return;
    int rc;
    loop_exception_t exc;
    if (cfuture_cancelled(source)) {
        rc = future_cancel(dest, NULL) < 0 ? -1 : 0;
    } else if (cfuture_exception(source, 0, &exc) == 1) {
        rc = future_set_exception(dest, &exc);
    } else {
        void *value = NULL;
        cfuture_result(source, 0, &value, NULL);
        rc = future_set_result(dest, value);
    }
    if (rc < 0) /* out of memory scheduling dest's callbacks, or dest was set */
        loop_raise(loop, errno == ENOMEM ? "MemoryError" : "InvalidStateError", "%s",
                   loop_error(loop));
}

/* @region call_set_state */
/* _set_state(destination, source): the handle's callback, loop's thread.
 * The chain has done its work: finish it (it lets go of destination). */
static void set_state(loop_t *loop, void *arg)
{
    bridge_t *b = arg;
    if (b->destination != NULL)
        copy_future_state(loop, b->source, b->destination);
    chain_finish(&b->chain);
}

/* _call_set_state(source): the cfuture's done callback, in the thread that
 * completed it.  A loop that is closed (or gone: the chain is cut) drops
 * the result. */
static void call_set_state(cfuture_t *source, void *arg)
{
    (void)source;
    bridge_t *b = arg;
    chain_send(&b->chain, set_state);
}
/* @end call_set_state */

/* _call_check_cancel(destination): destination's done callback, loop's
 * thread.  Cancelling the cfuture of a job that has not started means the
 * job never runs; a job that runs already goes on (RUNNING cannot be
 * cancelled), and its result is dropped by _set_state. */
static void call_check_cancel(loop_t *loop, future_t *destination, void *source)
{
    (void)loop;
    if (future_cancelled(destination))
        cfuture_cancel(source);
}

future_t *loop_wrap_future(loop_t *loop, cfuture_t *cf)
{
    if (loop == NULL || cf == NULL) {
        errno = EINVAL;
        if (loop != NULL)
            loop_fail(loop, EINVAL, "wrap_future: the concurrent future is NULL");
        return NULL;
    }
    future_t *dest = loop_create_future(loop); /* new_future = loop.create_future() */
    if (dest == NULL)
        return NULL;
    bridge_t *b = malloc(sizeof *b);
    if (b == NULL) {
        future_release(dest);
        loop_fail(loop, ENOMEM, "out of memory for wrap_future");
        return NULL;
    }
    chain_init(&b->chain, loop, bridge_cut, bridge_destroy);
    cfuture_retain(cf);
    b->source = cf;
    future_retain(dest);
    b->destination = dest;
    /* destination.add_done_callback(_call_check_cancel) */
    cfuture_retain(cf);
    if (future_add_done_callback_owned(dest, call_check_cancel, cf, cfuture_release_arg,
                                       "_call_check_cancel") < 0) {
        cfuture_release(cf);
        bridge_cut(&b->chain);
        chain_release(&b->chain);
        future_release(dest);
        loop_fail(loop, ENOMEM, "out of memory for wrap_future");
        return NULL;
    }
    chain_list(&b->chain); /* the creator's reference becomes the list's */
    /* source.add_done_callback(_call_set_state): at once, in this thread,
     * if cf is done already (it then sends through the chain, as a worker
     * would). */
    chain_retain(&b->chain);
    if (cfuture_add_done_callback_owned(cf, call_set_state, b, chain_release_arg) < 0) {
        chain_release(&b->chain);
        future_remove_done_callback(dest, call_check_cancel, cf);
        chain_finish(&b->chain);
        future_release(dest);
        loop_fail(loop, ENOMEM, "out of memory for wrap_future");
        return NULL;
    }
    return dest;
}
/* @end chain_future */

/* @region run_in_executor */
future_t *loop_run_in_executor(loop_t *loop, executor_t *executor, executor_job fn, void *arg)
{
    if (loop == NULL) {
        errno = EINVAL;
        return NULL;
    }
    /* self._check_closed() */
    if (loop_is_closed(loop)) {
        loop_fail(loop, EBADF, "Event loop is closed");
        return NULL;
    }
    if (fn == NULL) {
        loop_fail(loop, EINVAL, "run_in_executor: the job is NULL");
        return NULL;
    }
    /* if executor is None:
     *     executor = self._default_executor
     *     # Only check when the default executor is being used
     *     self._check_default_executor()
     *     if executor is None:
     *         executor = concurrent.futures.ThreadPoolExecutor(
     *             thread_name_prefix='asyncio')
     *         self._default_executor = executor */
    if (executor == NULL) {
        loop_executors_t *x = loop_executors(loop);
        if (x->shutdown_called) {
            loop_fail(loop, EPIPE, "Executor shutdown has been called");
            return NULL;
        }
        executor = x->default_executor;
        if (executor == NULL) {
            executor = executor_new(0, "asyncio");
            if (executor == NULL) {
                loop_fail(loop, ENOMEM, "%s", executor_last_error());
                return NULL;
            }
            x->default_executor = x->created = executor;
        }
    }
    /* return futures.wrap_future(executor.submit(func, *args), loop=self) */
    cfuture_t *cf = executor_submit(executor, fn, arg);
    if (cf == NULL) {
        loop_fail(loop, errno, "%s", executor_last_error());
        return NULL;
    }
    future_t *f = loop_wrap_future(loop, cf);
    if (f == NULL) { /* refused: the job must not run either, if it can be stopped */
        int err = errno;
        cfuture_cancel(cf);
        errno = err;
    }
    cfuture_release(cf);
    return f;
}
/* @end run_in_executor */

int loop_set_default_executor(loop_t *loop, executor_t *executor)
{
    if (executor == NULL)
        return loop_fail(loop, EINVAL, "executor must be ThreadPoolExecutor instance");
    loop_executors(loop)->default_executor = executor;
    return 0;
}

/* @region shutdown_default_executor */
/* _do_shutdown's thread, as a chain: it sends future.set_result(None) home. */
typedef struct shutdown_thread {
    chain_t chain;          /* first */
    executor_t *executor;
    future_t *future;       /* one reference, loop's thread only; NULL once cut */
    pthread_t thread;
    bool joined;            /* loop's thread only */
} shutdown_thread_t;

static void shutdown_thread_cut(chain_t *c)
{
    shutdown_thread_t *t = (shutdown_thread_t *)c;
    future_t *f = t->future;
    t->future = NULL;
    future_release(f);
}

static void shutdown_thread_destroy(chain_t *c)
{
    free(c);
}

/* future.set_result(None), on the loop's thread.  The coroutine may have
 * been cancelled meanwhile: then, as in CPython, set_result raises
 * InvalidStateError and the loop's exception handler hears of it. */
static void shutdown_done(loop_t *loop, void *arg)
{
    shutdown_thread_t *t = arg;
    if (t->future != NULL && future_set_result(t->future, NULL) < 0)
        loop_raise(loop, errno == ENOMEM ? "MemoryError" : "InvalidStateError", "%s",
                   loop_error(loop));
}

/* def _do_shutdown(self, future):
 *     try:
 *         self._default_executor.shutdown(wait=True)
 *         if not self.is_closed():
 *             self.call_soon_threadsafe(future.set_result, None)
 *     except Exception as ex: ...
 * (shutdown(wait=1) cannot fail from this thread, which is no worker.) */
static void *do_shutdown(void *arg)
{
    shutdown_thread_t *t = arg;
    executor_shutdown(t->executor, 1, 0);
    chain_send(&t->chain, shutdown_done); /* refused if closed: is_closed() */
    chain_release(&t->chain);             /* the thread's reference */
    return NULL;
}

/* thread.join(), once, on the loop's thread. */
static void shutdown_thread_join(loop_t *loop, shutdown_thread_t *t)
{
    if (t->joined)
        return;
    pthread_join(t->thread, NULL);
    t->joined = true;
    loop_executors_t *x = loop_executors(loop);
    if (x->shutdown_thread == t)
        x->shutdown_thread = NULL;
}

/* finally: thread.join() -- and drop what the frame holds.  If the loop
 * was freed first, loop_free() joined the thread already. */
static void shutdown_default_executor_cleanup(coro_t *c)
{
    shutdown_default_executor_t *s = (shutdown_default_executor_t *)c;
    shutdown_thread_t *t = s->thread;
    if (t != NULL) {
        if (!t->joined)
            shutdown_thread_join(s->loop, t);
        s->thread = NULL;
        s->has_thread = 0;
        chain_release(&t->chain); /* the frame's reference */
    }
    future_release(s->future);
    s->future = NULL;
}

/* async def shutdown_default_executor(self):
 *     self._executor_shutdown_called = True
 *     if self._default_executor is None:
 *         return
 *     future = self.create_future()
 *     thread = threading.Thread(target=self._do_shutdown, args=(future,))
 *     thread.start()
 *     try:
 *         await future
 *     finally:
 *         thread.join() */
static coro_status shutdown_default_executor_step(coro_t *c)
{
    shutdown_default_executor_t *s = (shutdown_default_executor_t *)c;
    loop_t *loop = s->loop;
    loop_executors_t *x = loop_executors(loop);
    shutdown_thread_t *t;
    int err;
    CORO_BEGIN(c);
    x->shutdown_called = true;
    if (x->default_executor == NULL)
        CORO_RETURN(c, NULL);
    s->future = loop_create_future(loop);
    t = malloc(sizeof *t);
    if (s->future == NULL || t == NULL) {
        free(t);
        CORO_RAISE(c, "MemoryError", "out of memory for shutdown_default_executor()");
    }
    chain_init(&t->chain, loop, shutdown_thread_cut, shutdown_thread_destroy);
    t->executor = x->default_executor;
    future_retain(s->future);
    t->future = s->future;
    t->joined = false;
    chain_list(&t->chain); /* the creator's reference becomes the list's */
    chain_retain(&t->chain); /* the thread's */
    err = pthread_create(&t->thread, NULL, do_shutdown, t);
    if (err != 0) {
        chain_release(&t->chain);
        chain_finish(&t->chain);
        CORO_RAISE(c, "RuntimeError", "can't start new thread: %s", strerror(err));
    }
    chain_retain(&t->chain); /* the frame's: it joins the thread */
    s->thread = t;
    s->has_thread = 1;
    x->shutdown_thread = t;
    CORO_TRY_AWAIT(c, s->future);
    shutdown_default_executor_cleanup(c); /* finally: thread.join() */
    if (c->failed)
        CORO_RERAISE(c);
    CORO_END(c);
}

coro_t *shutdown_default_executor_init(shutdown_default_executor_t *s, loop_t *loop)
{
    coro_init(&s->coro, shutdown_default_executor_step, "BaseEventLoop.shutdown_default_executor",
              shutdown_default_executor_cleanup);
    s->loop = loop;
    s->future = NULL;
    s->has_thread = 0;
    s->thread = NULL;
    return &s->coro;
}

static void shutdown_default_executor_free(coro_t *c)
{
    shutdown_default_executor_cleanup(c);
    free(c);
}

coro_t *loop_shutdown_default_executor(loop_t *loop)
{
    shutdown_default_executor_t *s = malloc(sizeof *s);
    if (s == NULL) {
        loop_fail(loop, ENOMEM, "out of memory for shutdown_default_executor()");
        return NULL;
    }
    shutdown_default_executor_init(s, loop);
    s->coro.release = shutdown_default_executor_free;
    return &s->coro;
}
/* @end shutdown_default_executor */

/* @region close_executor */
/* base_events.close(), its last lines:
 *     self._executor_shutdown_called = True
 *     executor = self._default_executor
 *     if executor is not None:
 *         self._default_executor = None
 *         executor.shutdown(wait=False)
 * Without waiting: the jobs already queued still run, and their results,
 * coming home to a closed loop, are dropped. */
void executors_loop_close(loop_t *loop)
{
    loop_executors_t *x = loop_executors(loop);
    x->shutdown_called = true;
    executor_t *executor = x->default_executor;
    if (executor != NULL) {
        x->default_executor = NULL;
        executor_shutdown(executor, 0, 0);
    }
}

/* loop_free(): what Python's garbage collector and interpreter exit do.
 * The thread of shutdown_default_executor is joined (it may be using the
 * default executor); the default executor the loop made is waited for
 * (its queued jobs run: CPython joins the pool's threads at exit) and
 * freed; then every chain is cut, so that no thread -- a job of the
 * caller's executor still running -- can reach the loop after this. */
void executors_loop_free(loop_t *loop)
{
    loop_executors_t *x = loop_executors(loop);
    if (x->shutdown_thread != NULL)
        shutdown_thread_join(loop, x->shutdown_thread);
    executor_free(x->created);
    x->created = NULL;
    while (x->chains != NULL)
        chain_finish(x->chains);
}
/* @end close_executor */

/* @region run_coroutine_threadsafe */
/* run_coroutine_threadsafe's state: the coroutine until its task is made,
 * the caller's cfuture, and the task while it is pending.  Owners: the
 * handle of the callback, then the loop's list, the cfuture's done callback
 * (_call_check_cancel) and the task's (_call_set_state). */
typedef struct threadsafe_call {
    chain_t chain;          /* first */
    coro_t *coro;           /* until the task takes it; loop's thread */
    cfuture_t *future;      /* one reference */
    task_t *task;           /* loop's thread: the task, while its callback holds this */
    bool set;               /* loop's thread: _call_set_state ran */
} threadsafe_call_t;

static void threadsafe_call_destroy(chain_t *c)
{
    threadsafe_call_t *r = (threadsafe_call_t *)c;
    cfuture_release(r->future);
    free(r);
}

/* _set_concurrent_future_state(concurrent, source), on the loop's thread:
 *     if source.cancelled():
 *         concurrent.cancel()
 *     if not concurrent.set_running_or_notify_cancel():
 *         return
 *     exception = source.exception()
 *     if exception is not None:
 *         concurrent.set_exception(_convert_future_exc(exception))
 *     else:
 *         concurrent.set_result(source.result()) */
static void set_concurrent_future_state(cfuture_t *concurrent, future_t *source)
{
    if (future_cancelled(source))
        cfuture_cancel(concurrent);
    if (cfuture_set_running_or_notify_cancel(concurrent) != 1)
        return;
    loop_exception_t exc;
    if (future_exception(source, &exc) == 1) {
        cfuture_set_exception(concurrent, &exc);
    } else {
        void *value = NULL;
        future_result(source, &value, &exc);
        cfuture_set_result(concurrent, value);
    }
}

/* _call_set_state(source): the task's done callback.  dest_loop is None
 * (a cfuture has no loop), so the state is set at once, here: a thread
 * blocked in cfuture_result() wakes now. */
static void call_set_state_out(loop_t *loop, future_t *task, void *arg)
{
    (void)loop;
    threadsafe_call_t *r = arg;
    r->set = true;
    set_concurrent_future_state(r->future, task);
}

/* The task's done callback goes: after it ran, or unrun.  Unrun, the task
 * is being freed pending (loop_free) or its callbacks were dropped with a
 * closed loop: CPython would leave the cfuture pending forever, and its
 * waiter blocked; here the cfuture gets the task's outcome if it has one,
 * else it is cancelled, so that no waiter hangs. */
static void call_set_state_release(void *arg)
{
    threadsafe_call_t *r = arg;
    if (!r->set) {
        if (future_done(task_future(r->task)))
            set_concurrent_future_state(r->future, task_future(r->task));
        else
            cfuture_cancel(r->future);
    }
    r->task = NULL;
    chain_finish(&r->chain); /* no thread needs the loop through it any more */
    chain_release(&r->chain);
}

/* source.cancel(), sent home by _call_check_cancel. */
static void cancel_task(loop_t *loop, void *arg)
{
    (void)loop;
    threadsafe_call_t *r = arg;
    if (r->task != NULL)
        task_cancel(r->task, NULL);
}

/* _call_check_cancel(destination): the cfuture's done callback, in the
 * thread that completed or cancelled it:
 *     if destination.cancelled():
 *         ...
 *             source_loop.call_soon_threadsafe(source.cancel) */
static void call_check_cancel_out(cfuture_t *destination, void *arg)
{
    if (cfuture_cancelled(destination))
        chain_send(arg, cancel_task);
}

/* The error a refused ensure_future() or _chain_future() raised:
 *     if future.set_running_or_notify_cancel():
 *         future.set_exception(exc)
 *     raise */
static void threadsafe_call_fail(loop_t *loop, threadsafe_call_t *r, int err)
{
    loop_exception_t exc;
    exception_set(&exc, err == ENOMEM ? "MemoryError" : "RuntimeError", loop_error(loop));
    if (cfuture_set_running_or_notify_cancel(r->future) == 1)
        cfuture_set_exception(r->future, &exc);
    loop_raise(loop, exc.type, "%s", exc.message);
}

/* def callback():
 *     try:
 *         futures._chain_future(ensure_future(coro, loop=loop), future)
 *     except (SystemExit, KeyboardInterrupt):
 *         raise
 *     except BaseException as exc:
 *         if future.set_running_or_notify_cancel():
 *             future.set_exception(exc)
 *         raise
 * On the loop's thread. */
static void threadsafe_callback(loop_t *loop, void *arg)
{
    threadsafe_call_t *r = arg;
    coro_t *coro = r->coro;
    r->coro = NULL; /* the task's now, or released by a refusal */
    task_t *task = loop_create_task(loop, coro);
    if (task == NULL) {
        threadsafe_call_fail(loop, r, errno);
        return;
    }
    r->task = task;
    chain_retain(&r->chain);
    chain_list(&r->chain); /* the list's reference */
    /* destination.add_done_callback(_call_check_cancel): at once if the
     * caller cancelled the cfuture already; the task is then cancelled,
     * but its first step is queued already: the coroutine starts, and meets
     * CancelledError at its first await (Task.cancel sets _must_cancel),
     * as in CPython. */
    chain_retain(&r->chain);
    if (cfuture_add_done_callback_owned(r->future, call_check_cancel_out, r,
                                        chain_release_arg) < 0) {
        chain_release(&r->chain);
        goto fail;
    }
    /* source.add_done_callback(_call_set_state) */
    chain_retain(&r->chain);
    if (future_add_done_callback_owned(task_future(task), call_set_state_out, r,
                                       call_set_state_release, "_call_set_state") < 0) {
        chain_release(&r->chain);
        goto fail;
    }
    task_release(task); /* the loop holds the task while it runs */
    return;
fail:
    r->task = NULL;
    task_cancel(task, NULL);
    task_release(task);
    chain_finish(&r->chain);
    threadsafe_call_fail(loop, r, ENOMEM);
}

/* The callback's handle goes (loop's thread).  If the callback never ran
 * -- the loop was closed first -- the coroutine is released unrun and the
 * cfuture cancelled: its waiter must not wait forever. */
static void threadsafe_call_release(void *arg)
{
    threadsafe_call_t *r = arg;
    if (r->coro != NULL) {
        coro_t *coro = r->coro;
        r->coro = NULL;
        if (coro->release != NULL)
            coro->release(coro);
        cfuture_cancel(r->future);
    }
    chain_release(&r->chain);
}

/* def run_coroutine_threadsafe(coro, loop):
 *     future = concurrent.futures.Future()
 *     def callback(): ...
 *     loop.call_soon_threadsafe(callback)
 *     return future */
cfuture_t *loop_run_coroutine_threadsafe(loop_t *loop, coro_t *coro)
{
    if (loop == NULL || coro == NULL) {
        executor_fail(EINVAL, "A coroutine object is required");
        return NULL;
    }
    threadsafe_call_t *r = malloc(sizeof *r);
    cfuture_t *future = r != NULL ? cfuture_new() : NULL;
    if (future == NULL) {
        free(r);
        executor_fail(ENOMEM, "out of memory for run_coroutine_threadsafe");
        return NULL;
    }
    chain_init(&r->chain, loop, NULL, threadsafe_call_destroy); /* the handle's reference */
    r->coro = coro;
    r->future = future;
    r->task = NULL;
    r->set = false;
    cfuture_retain(future); /* the caller's */
    if (loop_call_soon_threadsafe_owned(loop, threadsafe_callback, r, threadsafe_call_release) ==
        NULL) {
        int err = errno;
        r->coro = NULL; /* untouched: still the caller's */
        chain_release(&r->chain);
        cfuture_release(future);
        if (err == ENOMEM)
            executor_fail(ENOMEM, "out of memory for run_coroutine_threadsafe");
        else
            executor_fail(EBADF, "Event loop is closed");
        return NULL;
    }
    return future;
}
/* @end run_coroutine_threadsafe */
