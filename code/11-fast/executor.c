/* executor.c -- chapter 10: concurrent.futures.ThreadPoolExecutor
 * (thread.py), in C.
 *
 * A FIFO queue of jobs and up to max_workers threads that take them.  As
 * in CPython, threads are not started up front: each submit() starts one
 * more only if no worker is idle and fewer than max_workers run
 * (_adjust_thread_count), so a program that submits one job at a time
 * keeps one thread.  A worker that finishes a job counts itself idle (the
 * idle semaphore) before it takes the next one.
 *
 * One mutex guards the queue, the idle count, the thread table and the
 * shutdown flag: CPython's _shutdown_lock plus queue.SimpleQueue's own
 * lock.  A worker holds it only to take a job; the job runs without it.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "executor_private.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* @region executor_struct */
/* _WorkItem: the job and the future its outcome goes to. */
typedef struct work_item {
    cfuture_t *future;      /* one reference */
    executor_job fn;
    void *arg;
    struct work_item *next;
} work_item_t;

/* One worker thread: where it starts, and what it is called. */
typedef struct worker {
    executor_t *ex;
    unsigned index;         /* N of PREFIX_N */
    pthread_t thread;
    bool joined;            /* under join_lock */
} worker_t;

struct executor {
    pthread_mutex_t lock;   /* everything below but `workers[].joined` */
    pthread_cond_t work;    /* a job was queued, or shutdown was called */
    work_item_t *head, *tail; /* _work_queue, oldest first */
    unsigned idle;          /* _idle_semaphore's value */
    bool shutdown;          /* _shutdown */
    unsigned max_workers;   /* _max_workers */
    unsigned nthreads;      /* len(_threads): workers[0 .. nthreads) were started */
    worker_t *workers;      /* max_workers entries */
    pthread_mutex_t join_lock; /* one joiner at a time: shutdown(wait=1) twice */
    char prefix[64];        /* _thread_name_prefix */
};
/* @end executor_struct */

/* ThreadPoolExecutor._counter: names the pools that were given no prefix. */
static atomic_uint pool_counter;

executor_t *executor_new(unsigned max_workers, const char *thread_name_prefix)
{
    /* if max_workers is None:
     *     max_workers = min(32, (os.cpu_count() or 1) + 4) */
    if (max_workers == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        max_workers = (unsigned)((cpus > 0 ? cpus : 1) + 4);
        if (max_workers > 32)
            max_workers = 32;
    }
    executor_t *ex = calloc(1, sizeof *ex);
    worker_t *workers = ex != NULL ? calloc(max_workers, sizeof *workers) : NULL;
    if (workers == NULL) {
        free(ex);
        executor_fail(ENOMEM, "out of memory for a thread pool of %u workers", max_workers);
        return NULL;
    }
    ex->workers = workers;
    ex->max_workers = max_workers;
    /* self._thread_name_prefix = (thread_name_prefix or
     *                             ("ThreadPoolExecutor-%d" % self._counter())) */
    if (thread_name_prefix != NULL && thread_name_prefix[0] != '\0')
        snprintf(ex->prefix, sizeof ex->prefix, "%s", thread_name_prefix);
    else
        snprintf(ex->prefix, sizeof ex->prefix, "ThreadPoolExecutor-%u",
                 atomic_fetch_add(&pool_counter, 1));
    pthread_mutex_init(&ex->lock, NULL);
    pthread_mutex_init(&ex->join_lock, NULL);
    pthread_cond_init(&ex->work, NULL);
    return ex;
}

/* @region work_item_run */
/* _WorkItem.run():
 *     if not self.future.set_running_or_notify_cancel():
 *         return
 *     try:
 *         result = self.fn(*self.args, **self.kwargs)
 *     except BaseException as exc:
 *         self.future.set_exception(exc)
 *     else:
 *         self.future.set_result(result) */
static void work_item_run(work_item_t *w)
{
    if (cfuture_set_running_or_notify_cancel(w->future) == 1) {
        void *result = NULL;
        loop_exception_t error;
        memset(&error, 0, sizeof error);
        if (w->fn(w->arg, &result, &error) == 0) {
            cfuture_set_result(w->future, result);
        } else {
            if (error.type[0] == '\0') /* a job that failed without a word */
                snprintf(error.type, sizeof error.type, "RuntimeError");
            cfuture_set_exception(w->future, &error);
        }
    }
    cfuture_release(w->future);
    free(w);
}
/* @end work_item_run */

/* The thread's name, as threading.Thread(name=...) sets it: PREFIX_N.  The
 * kernel keeps 15 bytes of it (16 with the NUL): the rest is cut. */
static void name_thread(const worker_t *w)
{
    char name[80];
    snprintf(name, sizeof name, "%s_%u", w->ex->prefix, w->index);
    name[15] = '\0'; /* pthread_setname_np refuses a longer name (ERANGE) */
#if defined(__APPLE__)
    pthread_setname_np(name);
#elif defined(__linux__)
    pthread_setname_np(pthread_self(), name);
#endif
}

/* @region worker */
/* _worker(): take the oldest job, run it, count this thread idle again;
 * when the queue is empty and shutdown was called, end.  CPython wakes its
 * workers for the shutdown with a None in the queue, behind the jobs
 * already there; here the flag and the condition variable say the same:
 * a worker ends only once the queue is empty, so every job queued before
 * shutdown(wait=0) still runs (unless cancel_futures took it out). */
static void *worker(void *arg)
{
    worker_t *self = arg;
    executor_t *ex = self->ex;
    name_thread(self); /* before any job: a job may ask for its thread's name */
    pthread_mutex_lock(&ex->lock);
    for (;;) {
        while (ex->head == NULL && !ex->shutdown)
            pthread_cond_wait(&ex->work, &ex->lock); /* work_queue.get(block=True) */
        work_item_t *w = ex->head;
        if (w == NULL)
            break; /* empty, and shut down: this worker's end */
        ex->head = w->next;
        if (ex->head == NULL)
            ex->tail = NULL;
        pthread_mutex_unlock(&ex->lock);
        work_item_run(w);
        pthread_mutex_lock(&ex->lock);
        ex->idle++; /* executor._idle_semaphore.release() */
    }
    pthread_mutex_unlock(&ex->lock);
    return NULL;
}
/* @end worker */

/* @region adjust_thread_count */
/* _adjust_thread_count(), under the lock:
 *     # if idle threads are available, don't spin new threads
 *     if self._idle_semaphore.acquire(timeout=0):
 *         return
 *     num_threads = len(self._threads)
 *     if num_threads < self._max_workers:
 *         thread_name = '%s_%d' % (self._thread_name_prefix or self, num_threads)
 *         t = threading.Thread(name=thread_name, target=_worker, ...)
 *         t.start()
 *         self._threads.add(t)
 * -1 (with errno) only if no thread could be started and none runs: then
 * nobody would ever take the job. */
static int adjust_thread_count(executor_t *ex)
{
    if (ex->idle > 0) {
        ex->idle--;
        return 0;
    }
    if (ex->nthreads == ex->max_workers)
        return 0;
    worker_t *w = &ex->workers[ex->nthreads];
    w->ex = ex;
    w->index = ex->nthreads;
    w->joined = false;
    int err = pthread_create(&w->thread, NULL, worker, w);
    if (err == 0) {
        ex->nthreads++;
        return 0;
    }
    if (ex->nthreads > 0)
        return 0; /* the workers there are will take the job */
    return executor_fail(err, "can't start new thread: %s", strerror(err));
}
/* @end adjust_thread_count */

/* @region submit */
/* def submit(self, fn, /, *args, **kwargs):
 *     with self._shutdown_lock, _global_shutdown_lock:
 *         if self._shutdown:
 *             raise RuntimeError('cannot schedule new futures after shutdown')
 *         f = _base.Future()
 *         w = _WorkItem(f, fn, args, kwargs)
 *         self._work_queue.put(w)
 *         self._adjust_thread_count()
 *         return f
 * Everything that can fail is done before the job is queued, or undone:
 * a refused submit changes nothing, an accepted one will run. */
cfuture_t *executor_submit(executor_t *ex, executor_job fn, void *arg)
{
    if (ex == NULL || fn == NULL) {
        executor_fail(EINVAL, "submit: NULL executor or job");
        return NULL;
    }
    work_item_t *w = malloc(sizeof *w);
    cfuture_t *f = w != NULL ? cfuture_new() : NULL;
    if (f == NULL) {
        free(w);
        executor_fail(ENOMEM, "out of memory for a job");
        return NULL;
    }
    *w = (work_item_t){.future = f, .fn = fn, .arg = arg, .next = NULL};
    pthread_mutex_lock(&ex->lock);
    if (ex->shutdown) {
        pthread_mutex_unlock(&ex->lock);
        cfuture_release(f);
        free(w);
        executor_fail(EPIPE, "cannot schedule new futures after shutdown");
        return NULL;
    }
    work_item_t *old_tail = ex->tail;
    if (old_tail != NULL)
        old_tail->next = w;
    else
        ex->head = w;
    ex->tail = w;
    if (adjust_thread_count(ex) < 0) {
        /* No worker at all, so nobody took the job: take it back. */
        int err = errno;
        ex->tail = old_tail;
        if (old_tail != NULL)
            old_tail->next = NULL;
        else
            ex->head = NULL;
        pthread_mutex_unlock(&ex->lock);
        cfuture_release(f);
        free(w);
        errno = err;
        return NULL;
    }
    pthread_cond_signal(&ex->work);
    cfuture_retain(f); /* the caller's; the work item keeps its own */
    pthread_mutex_unlock(&ex->lock);
    return f;
}
/* @end submit */

/* @region shutdown */
/* def shutdown(self, wait=True, *, cancel_futures=False):
 *     with self._shutdown_lock:
 *         self._shutdown = True
 *         if cancel_futures:
 *             # Drain all work items from the queue, and then cancel their
 *             # associated futures.
 *             while True:
 *                 try: work_item = self._work_queue.get_nowait()
 *                 except queue.Empty: break
 *                 if work_item is not None: work_item.future.cancel()
 *         # Send a wake-up to prevent threads calling
 *         # _work_queue.get(block=True) from permanently blocking.
 *         self._work_queue.put(None)
 *     if wait:
 *         for t in self._threads:
 *             t.join()
 * The cancellations run their futures' callbacks, so they are made after
 * the lock is let go (a callback may submit, and be refused). */
int executor_shutdown(executor_t *ex, int wait, int cancel_futures)
{
    if (ex == NULL)
        return executor_fail(EINVAL, "shutdown: NULL executor");
    pthread_mutex_lock(&ex->lock);
    ex->shutdown = true;
    work_item_t *drained = NULL;
    if (cancel_futures) {
        drained = ex->head;
        ex->head = ex->tail = NULL;
    }
    pthread_cond_broadcast(&ex->work);
    unsigned nthreads = ex->nthreads; /* final: no thread starts after shutdown */
    bool own_worker = false;
    for (unsigned i = 0; i < nthreads; i++)
        own_worker = own_worker || pthread_equal(ex->workers[i].thread, pthread_self());
    pthread_mutex_unlock(&ex->lock);
    while (drained != NULL) {
        work_item_t *next = drained->next;
        cfuture_cancel(drained->future);
        cfuture_release(drained->future);
        free(drained);
        drained = next;
    }
    if (!wait)
        return 0;
    /* t.join() on the current thread: "cannot join current thread". */
    if (own_worker)
        return executor_fail(EDEADLK, "cannot join current thread");
    pthread_mutex_lock(&ex->join_lock);
    for (unsigned i = 0; i < nthreads; i++) {
        if (!ex->workers[i].joined) {
            pthread_join(ex->workers[i].thread, NULL);
            ex->workers[i].joined = true;
        }
    }
    pthread_mutex_unlock(&ex->join_lock);
    return 0;
}
/* @end shutdown */

unsigned executor_max_workers(executor_t *ex)
{
    return ex->max_workers; /* set once, by executor_new */
}

unsigned executor_threads(executor_t *ex)
{
    pthread_mutex_lock(&ex->lock);
    unsigned n = ex->nthreads;
    pthread_mutex_unlock(&ex->lock);
    return n;
}

void executor_free(executor_t *ex)
{
    if (ex == NULL)
        return;
    executor_shutdown(ex, 1, 0); /* every worker ended: the queue is empty */
    pthread_cond_destroy(&ex->work);
    pthread_mutex_destroy(&ex->join_lock);
    pthread_mutex_destroy(&ex->lock);
    free(ex->workers);
    free(ex);
}
