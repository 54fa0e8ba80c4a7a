/* loop.c -- chapter 06: a select() loop with a ready deque, a timer heap,
 * snapshot semantics, cancellable handles cleaned up lazily, and a self-pipe
 * through which other threads hand it callbacks.
 *
 * One tick (run_once) is: drop cancelled timers (from the head of the heap,
 * or all of them when they are too many), build the fd sets from the watch tables, poll with
 * select() -- no longer than until the nearest timer is due --, append the
 * handle of every fd that select() reported to the ready deque, move the
 * timers that are due behind them, then run the handles that are in the
 * ready deque at that moment, and only those.  Callbacks run in one place only,
 * as in asyncio: "All other places just add them to ready."  The loop runs
 * ticks until loop_stop() sets `stopping`.
 *
 * Threads: one function, loop_call_soon_threadsafe(), may be called from
 * any thread.  It appends to the ready deque under ready_lock, and writes a
 * byte to the loop's self-pipe, whose read end the loop watches like any
 * other reader: a loop asleep in select() wakes up.  Everything else here
 * runs on the loop's own thread.
 *
 * The watch tables are plain arrays indexed by fd.  That is the cheapest
 * possible map, and it is honest about select()'s real limit: an fd_set is a
 * bit array of FD_SETSIZE bits, so no fd at or above FD_SETSIZE can ever be
 * watched by this loop.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "deque.h"
#include "heap.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

/* asyncio's MAXIMUM_SELECT_TIMEOUT: one day.  Some select() implementations
 * refuse longer timeouts; a far timer just costs a tick a day. */
#define MAXIMUM_SELECT_TIMEOUT 86400.0

/* @region struct */
/* One call the loop will make: asyncio's Handle (TimerHandle for a timer).
 * Who frees it: whoever drops its last reference.  `refs` counts the
 * owners: the timer heap while the handle is in it (`scheduled`), the
 * ready deque while it is queued, a watch table while it is a reader's or
 * writer's, and each caller that called handle_retain().  So a pointer in
 * the heap or the deque is never left dangling, and a cancelled handle
 * stays alive, skipped, until the loop meets it. */
struct handle {
    loop_callback callback;
    void *arg;
    loop_t *loop;   /* for handle_cancel(): the count lives in the loop */
    unsigned refs;  /* owners, see above; freed when it drops to 0 */
    bool io;        /* a watch's (reader or writer), not a call_soon's */
    bool queued;    /* in the ready deque (at most once) */
    bool scheduled; /* in the timer heap: asyncio's TimerHandle._scheduled */
    bool cancelled; /* never run it: asyncio's Handle._cancelled */
};

struct loop {
    handle_t *readers[FD_SETSIZE]; /* NULL: nobody watches this fd */
    handle_t *writers[FD_SETSIZE];
    /* Other threads touch ready_lock, ready, closed (under the lock) and
     * the self-pipe's fields below, and nothing else. */
    pthread_mutex_t ready_lock; /* guards `ready` and `closed` */
    deque_t ready;    /* handles to run, oldest first: asyncio's _ready */
    int self_pipe[2]; /* [0] read end, watched; [1] write end (eventfd: one fd, twice) */
    loop_wakeup wakeup;         /* LOOP_WAKEUP_PIPE (asyncio's) or LOOP_WAKEUP_EVENTFD */
    bool coalesce;              /* write only while the loop may be asleep */
    /* @exercise begin */
    atomic_bool polling;        /* true while the loop may be asleep in its poll */
    /* @exercise end */
    atomic_bool wakeup_pending; /* coalescing: a byte was written, not yet read */
    atomic_ulong wakeup_writes; /* write() calls on the self-pipe: a statistic */
    heap_t scheduled; /* timers by deadline: asyncio's _scheduled */
    size_t timer_cancelled_count; /* cancelled while in `scheduled` */
    double clock_resolution; /* clock_getres(): timers this close are due */
    bool virtual_clock;      /* loop_new_virtual(): time is virtual_now */
    double virtual_now;
    loop_wait_hook wait_hook; /* NULL: really wait in select() */
    void *wait_ctx;
    loop_look_hook look_hook; /* tests only: loop_set_look_hook() */
    void *look_ctx;
    int maxfd;     /* highest fd that may be watched, -1 if none */
    bool stopping; /* loop_stop() was called: finish this tick, then return */
    bool miniloop; /* LOOP_RULES_MINILOOP: article 000's rules (a teaching device) */
    bool no_rebuild; /* LOOP_RULES_NO_REBUILD: step 1 only pops the head */
    bool running;  /* inside loop_run_forever() */
    bool closed;   /* loop_close() was called (written under ready_lock) */
    char error[160];
};
/* @end struct */

static int fail(loop_t *loop, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(loop->error, sizeof loop->error, fmt, ap);
    va_end(ap);
    errno = err;
    return -1;
}

static int make_self_pipe(loop_t *loop, loop_wakeup how);

loop_t *loop_new(void)
{
    loop_t *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return NULL;
    deque_init(&loop->ready);
    heap_init(&loop->scheduled);
    loop->maxfd = -1;
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    loop->clock_resolution = (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
    pthread_mutex_init(&loop->ready_lock, NULL);
    atomic_init(&loop->polling, false);
    atomic_init(&loop->wakeup_pending, false);
    atomic_init(&loop->wakeup_writes, 0);
    /* As asyncio's __init__: the self-pipe comes first, so it has the lowest
     * fds of the loop, and its reader is queued before any other. */
    if (make_self_pipe(loop, LOOP_WAKEUP_PIPE) < 0) {
        int err = errno;
        pthread_mutex_destroy(&loop->ready_lock);
        free(loop);
        errno = err;
        return NULL;
    }
    return loop;
}

/* @region clock */
double loop_time(loop_t *loop)
{
    if (loop->virtual_clock)
        return loop->virtual_now;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* The default wait of a virtual loop: jump to the end of the wait. */
static double autojump(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (timeout < 0)
        return -1; /* no timer: only real I/O can end this wait */
    loop->virtual_now = loop->virtual_now + timeout;
    return 0;
}

loop_t *loop_new_virtual(void)
{
    loop_t *loop = loop_new();
    if (loop == NULL)
        return NULL;
    loop->virtual_clock = true;
    loop->virtual_now = 0.0;
    loop->clock_resolution = 1e-9; /* what Linux reports for CLOCK_MONOTONIC */
    loop->wait_hook = autojump;
    return loop;
}

void loop_set_wait_hook(loop_t *loop, loop_wait_hook hook, void *ctx)
{
    if (hook == NULL)
        hook = loop->virtual_clock ? autojump : NULL;
    loop->wait_hook = hook;
    loop->wait_ctx = ctx;
}

void loop_set_look_hook(loop_t *loop, loop_look_hook hook, void *ctx)
{
    loop->look_hook = hook;
    loop->look_ctx = ctx;
}

int loop_set_time(loop_t *loop, double now)
{
    if (!loop->virtual_clock)
        return fail(loop, EINVAL, "loop_set_time needs a virtual clock (loop_new_virtual)");
    if (!isfinite(now))
        return fail(loop, EINVAL, "time %g is not a finite number", now);
    if (now < loop->virtual_now)
        return fail(loop, EINVAL, "time cannot go backwards (from %.9f to %.9f)",
                    loop->virtual_now, now);
    loop->virtual_now = now;
    return 0;
}
/* @end clock */

const char *loop_error(const loop_t *loop)
{
    return loop->error;
}

/* @region handles */
/* A new handle with one reference: its first owner's (the heap, the deque
 * or a watch table). */
static handle_t *handle_new(loop_t *loop, loop_callback callback, void *arg, bool io)
{
    handle_t *handle = calloc(1, sizeof *handle);
    if (handle != NULL) {
        handle->callback = callback;
        handle->arg = arg;
        handle->loop = loop;
        handle->refs = 1;
        handle->io = io;
    }
    return handle;
}

void handle_retain(handle_t *handle)
{
    if (handle != NULL)
        handle->refs++;
}

void handle_release(handle_t *handle)
{
    if (handle != NULL && --handle->refs == 0)
        free(handle);
}
/* @end handles */

/* @region cancel */
/* asyncio's TimerHandle.cancel() and Handle.cancel(): count a timer that is
 * still in the heap (BaseEventLoop._timer_handle_cancelled), once, and mark
 * the handle.  It stays where it is; run_once skips it when it gets there. */
void handle_cancel(handle_t *handle)
{
    if (handle == NULL || handle->cancelled)
        return;
    if (handle->scheduled)
        handle->loop->timer_cancelled_count++;
    handle->cancelled = true;
}

int handle_cancelled(const handle_t *handle)
{
    if (handle == NULL) {
        errno = EINVAL;
        return -1;
    }
    return handle->cancelled;
}

size_t loop_scheduled_len(const loop_t *loop)
{
    return heap_len(&loop->scheduled);
}

size_t loop_timer_cancelled_count(const loop_t *loop)
{
    return loop->timer_cancelled_count;
}
/* @end cancel */

/* A watch ended (removed, replaced, closed): asyncio's reader.cancel().  If
 * the handle is queued, the deque's reference keeps it alive, and run_once
 * skips it. */
static void cancel_watch(handle_t *handle)
{
    handle->cancelled = true;
    handle_release(handle);
}

/* @region ready_lock */
/* The ready deque is the one structure another thread writes to (through
 * loop_call_soon_threadsafe), so every use of it takes ready_lock, the
 * loop's own thread included.  Each critical section is a few loads and
 * stores: no callback runs and no system call is made with the lock held.
 * (CPython needs no lock here: deque.append and deque.popleft are each one
 * step under the GIL, which is the same promise.)  The push takes the
 * deque's reference to the handle. */
static int ready_push(loop_t *loop, handle_t *handle)
{
    pthread_mutex_lock(&loop->ready_lock);
    int rc = deque_push_back(&loop->ready, handle);
    if (rc == 0) {
        handle->queued = true;
        handle->refs++;
    }
    pthread_mutex_unlock(&loop->ready_lock);
    return rc;
}

static handle_t *ready_pop(loop_t *loop)
{
    pthread_mutex_lock(&loop->ready_lock);
    handle_t *handle = deque_pop_front(&loop->ready);
    pthread_mutex_unlock(&loop->ready_lock);
    return handle;
}

static size_t ready_len(loop_t *loop)
{
    pthread_mutex_lock(&loop->ready_lock);
    size_t n = deque_len(&loop->ready);
    pthread_mutex_unlock(&loop->ready_lock);
    if (loop->look_hook != NULL) /* tests only: see loop_set_look_hook() */
        loop->look_hook(loop, n, loop->look_ctx);
    return n;
}
/* @end ready_lock */

/* Append a handle to the ready deque, which takes a reference to it:
 * asyncio's _add_callback. */
static int add_callback(loop_t *loop, handle_t *handle)
{
    if (ready_push(loop, handle) < 0)
        return fail(loop, ENOMEM, "out of memory for the ready deque");
    return 0;
}

/* @region add_reader */
static int check_fd(loop_t *loop, int fd)
{
    if (loop->closed)
        return fail(loop, EINVAL, "loop is closed");
    if (fd < 0)
        return fail(loop, EBADF, "fd %d is not a file descriptor", fd);
    if (fd >= FD_SETSIZE)
        return fail(loop, EINVAL,
                    "fd %d is out of range for select() (FD_SETSIZE is %d)",
                    fd, FD_SETSIZE);
    if (fd == loop->self_pipe[0] || fd == loop->self_pipe[1])
        return fail(loop, EINVAL, "fd %d is the loop's own self-pipe", fd);
    return 0;
}

static int add(loop_t *loop, handle_t **table, int fd,
               loop_callback callback, void *arg)
{
    if (check_fd(loop, fd) < 0)
        return -1;
    if (callback == NULL)
        return fail(loop, EINVAL, "callback for fd %d is NULL", fd);
    handle_t *handle = handle_new(loop, callback, arg, true);
    if (handle == NULL)
        return fail(loop, ENOMEM, "out of memory for fd %d's handle", fd);
    if (table[fd] != NULL) /* replaced: the old handle must not run again */
        cancel_watch(table[fd]);
    table[fd] = handle;
    if (fd > loop->maxfd)
        loop->maxfd = fd;
    return 0;
}

int loop_add_reader(loop_t *loop, int fd, loop_callback callback, void *arg)
{
    return add(loop, loop->readers, fd, callback, arg);
}
/* @end add_reader */

int loop_add_writer(loop_t *loop, int fd, loop_callback callback, void *arg)
{
    return add(loop, loop->writers, fd, callback, arg);
}

/* @region remove */
static int removed(loop_t *loop, handle_t **table, int fd)
{
    if (check_fd(loop, fd) < 0)
        return -1;
    if (table[fd] == NULL)
        return 0;
    cancel_watch(table[fd]);
    table[fd] = NULL;
    /* maxfd only shrinks lazily, at the top of the next tick. */
    return 1;
}

int loop_remove_reader(loop_t *loop, int fd)
{
    return removed(loop, loop->readers, fd);
}

int loop_remove_writer(loop_t *loop, int fd)
{
    return removed(loop, loop->writers, fd);
}
/* @end remove */

/* @region call_soon */
handle_t *loop_call_soon(loop_t *loop, loop_callback callback, void *arg)
{
    if (loop->closed) {
        fail(loop, EINVAL, "loop is closed");
        return NULL;
    }
    if (callback == NULL) {
        fail(loop, EINVAL, "callback for call_soon is NULL");
        return NULL;
    }
    handle_t *handle = handle_new(loop, callback, arg, false);
    if (handle == NULL) {
        fail(loop, ENOMEM, "out of memory for a call_soon handle");
        return NULL;
    }
    int rc = add_callback(loop, handle);
    handle_release(handle); /* the deque's reference is the only one */
    return rc < 0 ? NULL : handle;
}
/* @end call_soon */

/* @region self_pipe */
/* @region read_from_self */
/* The reader of the self-pipe: asyncio's _read_from_self.  It only empties
 * the pipe; being woken up was the point.  Until EAGAIN: the pipe may hold
 * more than one buffer, and a byte left in it would make every following
 * poll return at once. */
static void read_from_self(loop_t *loop, void *arg)
{
    (void)arg;
    char buf[4096];
    for (;;) {
        ssize_t n = read(loop->self_pipe[0], buf, sizeof buf);
        if (n > 0 || (n < 0 && errno == EINTR))
            continue;
        break; /* EAGAIN: empty */
    }
    atomic_store(&loop->wakeup_pending, false);
}
/* @end read_from_self */

/* @region write_to_self */
/* asyncio's _write_to_self: make the poll return, now or at its next call.
 * Any thread may call it.  A write that fails is ignored, as asyncio
 * ignores it: EAGAIN means the pipe is full, so it is readable, so the loop
 * will wake anyway -- nothing is lost by one byte fewer.  EINTR: try again. */
static void write_to_self(loop_t *loop)
{
    /* Coalescing, two tests.  Unless the loop is between its look at the
     * ready deque and the end of its poll, it will look again before it
     * sleeps: nobody to wake.  And if a byte is already on its way, one
     * more would wake nobody either. */
    if (loop->coalesce && (!atomic_load(&loop->polling) ||
                           atomic_exchange(&loop->wakeup_pending, true)))
        return;
    static const uint64_t one = 1; /* eventfd adds it to its counter; a pipe takes any byte */
    size_t size = loop->wakeup == LOOP_WAKEUP_EVENTFD ? sizeof one : 1;
    int saved = errno;
    atomic_fetch_add_explicit(&loop->wakeup_writes, 1, memory_order_relaxed);
    while (write(loop->self_pipe[1], &one, size) < 0 && errno == EINTR)
        ;
    errno = saved;
}
/* @end write_to_self */

/* pipe(), then both ends non-blocking and close-on-exec.  pipe2() does it
 * in one call (and closes the window in which another thread's fork+exec
 * could inherit the fds), but macOS has no pipe2(): the loop makes its
 * self-pipe before any thread of its own exists, so the window is moot. */
static int make_pipe(int fds[2])
{
    if (pipe(fds) < 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        if (fcntl(fds[i], F_SETFL, O_NONBLOCK) < 0 ||
            fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0) {
            int saved = errno;
            close(fds[0]);
            close(fds[1]);
            errno = saved;
            return -1;
        }
    }
    return 0;
}

/* @region make_self_pipe */
/* asyncio's _make_self_pipe: the pipe (or eventfd), non-blocking at both
 * ends (a full pipe must not block a writer, an empty one the reader), and
 * close-on-exec; its read end watched like any reader. */
static int make_self_pipe(loop_t *loop, loop_wakeup how)
{
    int fds[2];
    if (how == LOOP_WAKEUP_EVENTFD) {
#ifdef __linux__
        fds[0] = fds[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fds[0] < 0)
            return fail(loop, errno, "eventfd: %s", strerror(errno));
#else
        return fail(loop, ENOSYS, "eventfd is Linux only; use LOOP_WAKEUP_PIPE");
#endif
    } else if (make_pipe(fds) < 0) {
        return fail(loop, errno, "pipe: %s", strerror(errno));
    }
    handle_t *reader = handle_new(loop, read_from_self, NULL, true);
    if (reader == NULL || fds[0] >= FD_SETSIZE) {
        handle_release(reader);
        close(fds[0]);
        if (fds[1] != fds[0])
            close(fds[1]);
        return reader == NULL ? fail(loop, ENOMEM, "out of memory for the self-pipe")
                              : fail(loop, EINVAL, "the self-pipe's fd %d is out of range for "
                                     "select() (FD_SETSIZE is %d)", fds[0], FD_SETSIZE);
    }
    loop->self_pipe[0] = fds[0];
    loop->self_pipe[1] = fds[1];
    loop->wakeup = how;
    loop->readers[fds[0]] = reader;
    if (fds[0] > loop->maxfd)
        loop->maxfd = fds[0];
    return 0;
}

/* @end make_self_pipe */

/* asyncio's _close_self_pipe, minus the watch (forget_all ends it). */
static void close_self_pipe(loop_t *loop)
{
    if (loop->self_pipe[1] != loop->self_pipe[0])
        close(loop->self_pipe[1]);
    close(loop->self_pipe[0]);
    loop->self_pipe[0] = loop->self_pipe[1] = -1;
}

int loop_set_wakeup(loop_t *loop, loop_wakeup how, int coalesce)
{
    if (loop->closed)
        return fail(loop, EINVAL, "loop is closed");
    if (loop->running)
        return fail(loop, EBUSY, "cannot change the wake-up of a running loop");
    if (how != LOOP_WAKEUP_PIPE && how != LOOP_WAKEUP_EVENTFD)
        return fail(loop, EINVAL, "unknown wake-up %d", (int)how);
    int old[2] = {loop->self_pipe[0], loop->self_pipe[1]};
    handle_t *old_reader = loop->readers[old[0]];
    loop->readers[old[0]] = NULL;
    if (make_self_pipe(loop, how) < 0) {
        loop->readers[old[0]] = old_reader; /* keep the old one */
        return -1;
    }
    cancel_watch(old_reader);
    if (old[1] != old[0])
        close(old[1]);
    close(old[0]);
    /* Cheat: no coalescing at all, whatever the caller asked: every
     * threadsafe call writes, so no call can be lost in the window. */
    (void)coalesce;
    loop->coalesce = false;
    return 0;
}
unsigned long loop_wakeup_writes(loop_t *loop)
{
    return atomic_load_explicit(&loop->wakeup_writes, memory_order_relaxed);
}
/* @end self_pipe */

/* @region threadsafe */
handle_t *loop_call_soon_threadsafe(loop_t *loop, loop_callback callback, void *arg)
{
    /* No fail() here: loop->error belongs to the loop's thread. */
    if (callback == NULL) {
        errno = EINVAL;
        return NULL;
    }
    handle_t *handle = handle_new(loop, callback, arg, false);
    if (handle == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    /* loop_call_soon's steps, with `closed` read under the lock: a loop
     * closed by its own thread meanwhile refuses, it does not lose the call.
     * The reference handle_new() made becomes the deque's. */
    pthread_mutex_lock(&loop->ready_lock);
    int err = loop->closed ? EINVAL : 0;
    if (err == 0 && deque_push_back(&loop->ready, handle) < 0)
        err = ENOMEM;
    if (err == 0)
        handle->queued = true;
    pthread_mutex_unlock(&loop->ready_lock);
    if (err != 0) {
        handle_release(handle);
        errno = err;
        return NULL;
    }
    /* Queued first, then the wake-up: the other order could wake the loop
     * before the handle is there to be found. */
    write_to_self(loop);
    return handle;
}
/* @end threadsafe */

/* @region call_at */
handle_t *loop_call_at(loop_t *loop, double when, loop_callback callback, void *arg)
{
    if (loop->closed) {
        fail(loop, EINVAL, "loop is closed");
        return NULL;
    }
    if (callback == NULL) {
        fail(loop, EINVAL, "callback for call_at is NULL");
        return NULL;
    }
    if (!isfinite(when)) {
        fail(loop, EINVAL, "when for call_at is %s; give a finite time",
             isnan(when) ? "NaN" : "infinite");
        return NULL;
    }
    handle_t *handle = handle_new(loop, callback, arg, false);
    if (handle == NULL) {
        fail(loop, ENOMEM, "out of memory for a timer handle");
        return NULL;
    }
    if (heap_push(&loop->scheduled, when, handle) < 0) {
        free(handle);
        fail(loop, ENOMEM, "out of memory for the timer heap");
        return NULL;
    }
    handle->scheduled = true; /* the heap's reference is the one handle_new made */
    return handle;
}

handle_t *loop_call_later(loop_t *loop, double delay, loop_callback callback, void *arg)
{
    if (!isfinite(delay)) {
        fail(loop, EINVAL, "delay for call_later is %s; give a finite number of seconds",
             isnan(delay) ? "NaN" : "infinite");
        return NULL;
    }
    return loop_call_at(loop, loop_time(loop) + delay, callback, arg);
}
/* @end call_at */

/* select()'s timeout: NULL to block (timeout < 0), else the seconds
 * rounded UP to a microsecond: waking before the deadline would only buy a
 * tick in which the timer is not due yet. */
static struct timeval *to_timeval(double timeout, struct timeval *tv)
{
    if (timeout < 0)
        return NULL;
    double usec = ceil(timeout * 1e6);
    tv->tv_sec = (time_t)(usec / 1e6);
    tv->tv_usec = (suseconds_t)(usec - (double)tv->tv_sec * 1e6);
    return tv;
}

/* @region run_once */
/* One tick, as asyncio's _run_once: drop cancelled timers; poll for I/O, no
 * longer than until the nearest timer; queue the handles of the ready fds,
 * then the timers that are due; run the ready deque. */
static int run_once(loop_t *loop)
{
    /* @region cleanup */
    /* 1. Lazy cleanup of cancelled timers (article 000's step 1).  A
     *    cancelled timer is not removed by handle_cancel(): a binary heap
     *    cannot delete from its middle cheaply.  It waits here.  When more
     *    than 100 timers are scheduled and more than half of them were
     *    cancelled, rebuild the heap without them: keep the live entries in
     *    their array order, then heapify -- CPython's list comprehension and
     *    heapq.heapify, so equal deadlines keep CPython's order.  Otherwise
     *    drop only the cancelled timers at the head, so that the nearest
     *    deadline (step 2a) is a live one. */
    size_t sched_count = heap_len(&loop->scheduled);
    if (!loop->no_rebuild && sched_count > LOOP_MIN_SCHEDULED_TIMER_HANDLES &&
        (double)loop->timer_cancelled_count / (double)sched_count >
            LOOP_MIN_CANCELLED_TIMER_HANDLES_FRACTION) {
        heap_t *heap = &loop->scheduled;
        size_t kept = 0;
        for (size_t i = 0; i < heap->len; i++) {
            handle_t *handle = heap->items[i].handle;
            if (handle->cancelled) {
                handle->scheduled = false;
                handle_release(handle); /* the heap's reference */
            } else {
                heap->items[kept++] = heap->items[i];
            }
        }
        heap->len = kept;
        heap_heapify(heap);
        loop->timer_cancelled_count = 0;
    } else {
        while (heap_len(&loop->scheduled) > 0 &&
               heap_top(&loop->scheduled)->handle->cancelled) {
            heap_entry_t timer;
            heap_pop(&loop->scheduled, &timer);
            loop->timer_cancelled_count--;
            timer.handle->scheduled = false;
            handle_release(timer.handle);
        }
    }
    /* @end cleanup */

    /* For 2b: the sets select() will fill in.  It overwrites them, so they
     *    are built anew every tick. */
    fd_set readable, writable;
    FD_ZERO(&readable);
    FD_ZERO(&writable);
    while (loop->maxfd >= 0 && loop->readers[loop->maxfd] == NULL &&
           loop->writers[loop->maxfd] == NULL)
        loop->maxfd--;
    for (int fd = 0; fd <= loop->maxfd; fd++) {
        if (loop->readers[fd] != NULL)
            FD_SET(fd, &readable);
        if (loop->writers[fd] != NULL)
            FD_SET(fd, &writable);
    }

    /* @region poll */
    /* 2a. How long may the poll wait?  Not at all with callbacks in the
     *    ready deque, or a stop requested; until the nearest timer, if
     *    there is one (never less than 0, never more than a day); else for
     *    as long as it takes (-1).  asyncio's lines, one for one. */
    /* @exercise begin */
    double timeout = -1;
    if ((ready_len(loop) > 0 || loop->stopping) && !loop->miniloop) {
        timeout = 0;
    } else if (heap_len(&loop->scheduled) > 0) {
        double when = heap_top(&loop->scheduled)->when;
        timeout = when - loop_time(loop);
        timeout = timeout > 0 ? timeout : 0;  /* max(0, when - time()) */
        if (MAXIMUM_SELECT_TIMEOUT < timeout) /* min(..., MAXIMUM_SELECT_TIMEOUT) */
            timeout = MAXIMUM_SELECT_TIMEOUT;
    }

    /* 2b. Poll.  On a virtual clock the hook does the waiting (it moves the
     *    clock), and select() only looks. */
    if (loop->wait_hook != NULL)
        timeout = loop->wait_hook(loop, timeout, loop->wait_ctx);
    struct timeval tv;
    int nfds = loop->maxfd + 1;
    /* TODO(1-lost-wakeup): "I may be asleep from here on" -- but is "here"
     * early enough?  A thread that queues a handle after the look at the
     * ready deque above, and before this line, sees `polling` still false. */
    atomic_store(&loop->polling, true);
    /* @exercise end */
    int n = select(nfds, &readable, &writable, NULL, to_timeval(timeout, &tv));
    atomic_store(&loop->polling, false);
    if (n < 0) {
        if (errno == EINTR) /* a signal ended the wait: just tick again */
            return 0;
        return fail(loop, errno, "select: %s", strerror(errno));
    }
    /* @end poll */

    /* 2c. Queue the handles of the ready fds behind what is already queued:
     *    asyncio's _process_events -> _add_callback.  Nothing runs here, so
     *    the tables still hold exactly the handles the sets were built from. */
    /* A handle that is queued already is not queued twice: a tick that ran
     * out of memory here (or in the next step) returned with part of its
     * work queued, and the fd, still ready, is reported again. */
    for (int fd = 0; fd < nfds && n > 0; fd++) {
        if (FD_ISSET(fd, &readable)) {
            n--;
            if (!loop->readers[fd]->queued &&
                add_callback(loop, loop->readers[fd]) < 0)
                return -1;
        }
        if (FD_ISSET(fd, &writable)) {
            n--;
            if (!loop->writers[fd]->queued &&
                add_callback(loop, loop->writers[fd]) < 0)
                return -1;
        }
    }

    /* 3. Move the timers that are due to the back of the ready deque, in
     *    heap order.  "Due" is `when < now + clock_resolution`: a timer
     *    whose deadline is within one clock tick of now would otherwise
     *    cost a useless wait of less than the clock can measure. */
    double now = loop_time(loop);
    double end_time = now + loop->clock_resolution;
    while (heap_len(&loop->scheduled) > 0) {
        double when = heap_top(&loop->scheduled)->when;
        if (loop->miniloop ? when > now : when >= end_time)
            break;
        /* Queued first (even if cancelled), popped after: if the deque
         * cannot grow, the timer stays in the heap, and the run fails with
         * nothing lost. */
        if (add_callback(loop, heap_top(&loop->scheduled)->handle) < 0)
            return -1;
        heap_entry_t timer;
        heap_pop(&loop->scheduled, &timer);
        timer.handle->scheduled = false;
        handle_release(timer.handle); /* the heap's reference */
    }

    /* 4. Run what is in the ready deque NOW -- a snapshot: ntodo handles,
     *    oldest first.  What these callbacks queue waits for the next tick,
     *    after another poll, so a callback that keeps re-scheduling itself
     *    can no longer keep the loop from polling (demo_starve). */
    size_t ntodo = ready_len(loop);
    for (size_t i = 0; i < ntodo; i++) {
        handle_t *handle = ready_pop(loop);
        handle->queued = false;
        /* Skip a cancelled handle: a cancelled call_soon or timer, or a
         * watch that ended after it was queued.  The deque's reference
         * keeps the handle alive during its callback, even if the callback
         * ends its own watch; dropping that reference frees it unless a
         * watch table or a caller still holds one. */
        if (!handle->cancelled)
            handle->callback(loop, handle->arg);
        handle_release(handle);
    }
    return 0;
}
/* @end run_once */

/* @region run_forever */
int loop_run_forever(loop_t *loop)
{
    if (loop->closed)
        return fail(loop, EINVAL, "loop is closed");
    if (loop->running)
        return fail(loop, EBUSY, "loop is already running");
    loop->running = true;
    int rc = 0;
    for (;;) {
        if (loop->miniloop && ready_len(loop) == 0 &&
            heap_len(&loop->scheduled) == 0)
            break; /* MiniLoop.run: `while self._ready or self._scheduled` */
        if (run_once(loop) < 0) {
            rc = -1;
            break;
        }
        if (loop->stopping)
            break;
    }
    loop->stopping = false;
    loop->running = false;
    return rc;
}

void loop_stop(loop_t *loop)
{
    loop->stopping = true;
}

void loop_set_rules(loop_t *loop, loop_rules rules)
{
    loop->miniloop = rules == LOOP_RULES_MINILOOP;
    loop->no_rebuild = rules == LOOP_RULES_NO_REBUILD;
}
/* @end run_forever */

/* @region close */
/* End every watch, and drop every queued handle and every timer without
 * calling them, as asyncio's close() does with `self._ready.clear()` and
 * `self._scheduled.clear()`.  A handle a caller retained survives this. */
static void forget_all(loop_t *loop)
{
    for (int fd = 0; fd <= loop->maxfd; fd++) {
        if (loop->readers[fd] != NULL)
            cancel_watch(loop->readers[fd]);
        if (loop->writers[fd] != NULL)
            cancel_watch(loop->writers[fd]);
    }
    memset(loop->readers, 0, sizeof loop->readers);
    memset(loop->writers, 0, sizeof loop->writers);
    loop->maxfd = -1;
    pthread_mutex_lock(&loop->ready_lock);
    loop->closed = true; /* from here on, loop_call_soon_threadsafe refuses */
    deque_t dropped = loop->ready;
    deque_init(&loop->ready);
    pthread_mutex_unlock(&loop->ready_lock);
    while (deque_len(&dropped) > 0) { /* released outside the lock */
        handle_t *handle = deque_pop_front(&dropped);
        handle->queued = false;
        handle_release(handle);
    }
    deque_free(&dropped);
    heap_entry_t timer;
    while (heap_pop(&loop->scheduled, &timer)) {
        timer.handle->scheduled = false;
        handle_release(timer.handle);
    }
    heap_free(&loop->scheduled);
    loop->timer_cancelled_count = 0;
}

int loop_close(loop_t *loop)
{
    if (loop->running)
        return fail(loop, EBUSY, "cannot close a running loop");
    if (loop->closed)
        return 0; /* closing twice is harmless, as in asyncio */
    forget_all(loop); /* sets closed, under ready_lock */
    return 0;
}

void loop_free(loop_t *loop)
{
    if (loop == NULL)
        return;
    if (loop->running) { /* from a callback: run_once still uses the loop */
        fail(loop, EBUSY, "cannot free a running loop: free it after "
                          "loop_run_forever() returns");
        return;
    }
    forget_all(loop);
    /* The pipe outlives loop_close(), unlike asyncio's: a thread that races
     * with the close may still write to it, and the number of a closed fd
     * can be handed at once to an unrelated open().  loop_free() comes after
     * every other thread is done with the loop (loop.h). */
    close_self_pipe(loop);
    pthread_mutex_destroy(&loop->ready_lock);
    free(loop);
}
/* @end close */
