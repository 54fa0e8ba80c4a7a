/* loop.c -- chapter 08: an event loop over a selector (select, poll, epoll
 * or kqueue), with a ready deque, a timer heap,
 * snapshot semantics, cancellable handles cleaned up lazily, and a self-pipe
 * through which other threads hand it callbacks.  Chapter 08 gives it a
 * life: states and CPython's refusals (loop_run_forever, loop_close), a
 * callback that fails (handler.c), signals (signals.c), debug mode.
 *
 * One tick (run_once) is: drop cancelled timers (from the head of the heap,
 * or all of them when they are too many), wait in the selector -- no
 * longer than until the nearest timer is due --, append the
 * handle of every fd that the selector reported to the ready deque, move the
 * timers that are due behind them, then run the handles that are in the
 * ready deque at that moment, and only those.  Callbacks run in one place only,
 * as in asyncio: "All other places just add them to ready."  The loop runs
 * ticks until loop_stop() sets `stopping`.
 *
 * Threads: one function, loop_call_soon_threadsafe(), may be called from
 * any thread.  It appends to the loop's inbox under inbox_lock (chapter 11:
 * the ready deque itself is the loop thread's alone, see "inbox"), and
 * writes a byte to the loop's self-pipe, whose read end the loop watches
 * like any other reader: a loop asleep in its selector wakes up.
 * Everything else here runs on the loop's own thread.
 *
 * The watch tables are arrays indexed by fd, the cheapest possible map.
 * Since chapter 07 they grow with the highest fd watched: only the select
 * backend still stops at FD_SETSIZE.  Which fds the kernel watches is the
 * selector's business (selector.h); the loop tells it what changes, when a
 * reader or writer is added or removed, and asks it which fds are ready.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "loop_private.h"
#include "deque.h"
#include "heap.h"
#include "selector.h"

#include <errno.h>
#include <limits.h>
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
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

/* asyncio's MAXIMUM_SELECT_TIMEOUT: one day.  Some select() implementations
 * refuse longer timeouts; a far timer just costs a tick a day.  (The
 * selector would cut a longer one anyway: SELECTOR_MAX_TIMEOUT.) */
#define MAXIMUM_SELECT_TIMEOUT 86400.0

/* @region struct */
/* One call the loop will make: asyncio's Handle (TimerHandle for a timer).
 * Who frees it: whoever drops its last reference.  `refs` counts the
 * owners: the timer heap while the handle is in it (`scheduled`), the
 * ready deque while it is queued, a watch table while it is a reader's or
 * writer's, and each caller that called handle_retain().  So a pointer in
 * the heap or the deque is never left dangling, and a cancelled handle
 * stays alive, skipped, until the loop meets it.
 * Chapter 11: the flags are bits, and the handle reaches its loop through
 * the pool it came from (see "pool"): 48 bytes on a 64-bit machine, where
 * chapter 10's was 56, plus the 8 of calloc's header. */
typedef struct handle_pool handle_pool_t;
struct handle {
    loop_callback callback;
    void *arg;
    handle_pool_t *pool; /* where it goes back to; pool->loop is its loop */
    double when;
    /* Chapter 09: the handle owns one reference to arg (a future, a task),
     * dropped with release_arg(arg) when the handle is freed -- after its
     * callback ran, or when loop_close() drops it unrun.  NULL: arg is
     * borrowed, as in every earlier chapter. */
    void (*release_arg)(void *arg);
    unsigned refs;       /* owners, see above; freed when it drops to 0 */
    bool io : 1;         /* a watch's (reader or writer), not a call_soon's */
    bool queued : 1;     /* in the ready deque (at most once) */
    bool scheduled : 1;  /* in the timer heap: asyncio's TimerHandle._scheduled */
    bool cancelled : 1;  /* never run it: asyncio's Handle._cancelled */
    bool timer : 1;      /* call_at's: a TimerHandle, due at `when` (chapter 08: its repr) */
    bool named : 1;      /* cancelled in debug mode: keeps its name (asyncio's _repr) */
    bool running : 1;    /* its callback runs now */
    bool held : 1;       /* a signal handler's, in signals.c's table */
    bool pooled : 1;     /* chapter 11: from the pool's slabs, not from malloc */
};

/* Chapter 11: which threads' wake-ups are coalesced.  loop_set_wakeup()
 * chooses NEVER (0: a byte per call, asyncio's) or ALWAYS (1: libev's and
 * libuv's); a new loop starts with OTHER_THREADS. */
typedef enum loop_coalesce { COALESCE_NEVER, COALESCE_OTHER_THREADS, COALESCE_ALWAYS } loop_coalesce;

struct loop {
    handle_t **readers; /* readers[fd]: NULL if nobody watches fd */
    handle_t **writers;
    int capacity;       /* length of both tables; they grow with the highest fd */
    selector_t *selector; /* select, poll, epoll or kqueue: selector.h */
    const char *backend;  /* its name; still there after loop_close() */
    deque_t ready;    /* handles to run, oldest first: asyncio's _ready */
    /* Other threads touch inbox_lock, inbox, inbox_full, closed (under the
     * lock) and the self-pipe's fields below, and nothing else.  Chapter
     * 11: they no longer touch `ready` (see "inbox"). */
    pthread_mutex_t inbox_lock; /* guards `inbox` and `closed` */
    deque_t inbox;              /* other threads' posts, not yet in `ready` */
    atomic_bool inbox_full;     /* inbox is not empty (written under the lock) */
    int self_pipe[2]; /* [0] read end, watched; [1] write end (eventfd: one fd, twice) */
    loop_wakeup wakeup;         /* LOOP_WAKEUP_PIPE (asyncio's) or LOOP_WAKEUP_EVENTFD */
    loop_coalesce coalesce;     /* when a write may be skipped (chapter 11: see write_to_self) */
    atomic_bool polling;        /* from just before the look at `ready` to after the poll */
    atomic_bool wakeup_pending; /* coalescing: a byte was written, not yet read */
    atomic_ulong wakeup_writes; /* write() calls on the self-pipe: a statistic */
    handle_pool_t *pool; /* chapter 11: where handles come from ("pool") */
    heap_t scheduled; /* timers by deadline: asyncio's _scheduled */
    size_t timer_cancelled_count; /* cancelled while in `scheduled` */
    double clock_resolution; /* clock_getres(): timers this close are due */
    bool virtual_clock;      /* loop_new_virtual(): time is virtual_now */
    double virtual_now;
    loop_wait_hook wait_hook; /* NULL: really wait in the selector */
    void *wait_ctx;
    loop_look_hook look_hook; /* tests only: loop_set_look_hook() */
    void *look_ctx;
    bool stopping; /* loop_stop() was called: finish this tick, then return */
    bool miniloop; /* LOOP_RULES_MINILOOP: article 000's rules (a teaching device) */
    bool no_rebuild; /* LOOP_RULES_NO_REBUILD: step 1 only pops the head */
    bool running;  /* inside loop_run_forever() */
    bool requeue_guard; /* the last tick ran out of memory queueing (step 2c) */
    bool closed;   /* loop_close() was called (written under inbox_lock) */
    loop_errors_t errors;   /* handler.c's: the exception handler, debug mode */
    loop_signals_t signals; /* signals.c's: the handler of each signal */
    loop_tasks_t tasks;     /* chapter 09, future.c's: live futures, the current task */
    loop_executors_t executors; /* chapter 10, bridge.c's: the default executor, the chains */
    /* Chapter 10: the thread running the loop (CPython's _thread_id), for
     * debug mode's check; NULL while it does not run.  Atomic: other
     * threads read it (check_thread). */
    _Atomic(const void *) thread_id;
    char error[160];
};
/* @end struct */

/* Chapter 10: loop->error belongs to the loop's thread, which may be
 * writing it at any moment while the loop runs.  A refusal made to another
 * thread then (debug mode's thread check) goes into that thread's own
 * buffer, and loop_error() called from that thread returns it, until the
 * next error of the same loop in the same thread. */
static _Thread_local char thread_token; /* defined with check_thread */
static _Thread_local char foreign_error[160];
static _Thread_local const loop_t *foreign_loop;

static int vfail(loop_t *loop, int err, const char *fmt, va_list ap)
{
    const void *id = atomic_load(&loop->thread_id);
    if (id != NULL && id != &thread_token) {
        vsnprintf(foreign_error, sizeof foreign_error, fmt, ap);
        foreign_loop = loop;
    } else {
        vsnprintf(loop->error, sizeof loop->error, fmt, ap);
        if (foreign_loop == loop)
            foreign_loop = NULL;
    }
    errno = err;
    return -1;
}

static int fail(loop_t *loop, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(loop, err, fmt, ap);
    va_end(ap);
    return -1;
}

int loop_fail(loop_t *loop, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(loop, err, fmt, ap);
    va_end(ap);
    return -1;
}

static int make_self_pipe(loop_t *loop, loop_wakeup how);
static handle_pool_t *pool_new(loop_t *loop);
static void pool_free(handle_pool_t *pool);

/* @region new */
/* The selector a new loop starts with: LOOP_BACKEND's, if that variable is
 * set and not empty, else the platform's best. */
static selector_t *open_selector(void)
{
    const char *name = getenv("LOOP_BACKEND");
    return selector_open(name, NULL, 0);
}

loop_t *loop_new(void)
{
    loop_t *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return NULL;
    loop->pool = pool_new(loop); /* chapter 11 */
    loop->selector = loop->pool != NULL ? open_selector() : NULL;
    if (loop->selector == NULL) {
        int err = errno;
        free(loop->pool);
        free(loop);
        errno = err;
        return NULL;
    }
    loop->backend = selector_name(loop->selector);
    loop->errors.slow_callback_duration = LOOP_SLOW_CALLBACK_DURATION;
    deque_init(&loop->ready);
    deque_init(&loop->inbox);
    heap_init(&loop->scheduled);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    loop->clock_resolution = (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
    pthread_mutex_init(&loop->inbox_lock, NULL);
    atomic_init(&loop->inbox_full, false);
    atomic_init(&loop->polling, false);
    atomic_init(&loop->wakeup_pending, false);
    atomic_init(&loop->wakeup_writes, 0);
    atomic_init(&loop->thread_id, NULL);
    loop->coalesce = COALESCE_OTHER_THREADS; /* chapter 11: see write_to_self */
    /* As asyncio's __init__: the selector first, then the self-pipe, so
     * that the pipe has the lowest fds after the selector's own (epoll's,
     * kqueue's), and its reader is queued before any other. */
    if (make_self_pipe(loop, LOOP_WAKEUP_PIPE) < 0) {
        int err = errno;
        pthread_mutex_destroy(&loop->inbox_lock);
        selector_close(loop->selector);
        free(loop->readers);
        free(loop->writers);
        pool_free(loop->pool); /* no handle is live: make_self_pipe released its own */
        free(loop);
        errno = err;
        return NULL;
    }
    return loop;
}
/* @end new */

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
    if (foreign_loop == loop) /* chapter 10: this thread's refusal (vfail) */
        return foreign_error;
    return loop->error;
}

/* @region pool */
/* Chapter 11: handles from the loop, not from calloc.  The profile of
 * chapter 10's loop says that one calloc() and one free() per handle are
 * half of the instructions of a callback queued and run, and more of a
 * timer scheduled and cancelled.  The loop knows what malloc cannot: every
 * handle has the same size, and handles die young and in crowds.  So it
 * keeps them in slabs, arrays of SLAB_HANDLES slots allocated one at a
 * time, and a released handle goes onto the pool's free list, a stack, to
 * be the next one handed out (the warmest memory first).  A million
 * handles cost 3,907 mallocs, and a loop in a steady state none at all.
 *
 * What the pool keeps, it keeps: the slabs go back to malloc only when
 * the loop and every handle are gone.  A loop that once held a million
 * timers holds their 48 MB until loop_free() -- as a program that keeps a
 * freelist (CPython has several) trades memory for speed.
 *
 * A handle may outlive its loop (loop.h, "ownership": handle_cancel() on
 * a kept handle is safe after loop_free()), so the pool is its own block:
 * loop_free() sets pool->loop to NULL and frees the pool only if no handle
 * is live; otherwise the release of the last one does.
 *
 * The pool is the loop thread's, as every handle is.  The one function
 * other threads call, loop_call_soon_threadsafe(), takes its handle from
 * malloc, as every handle did before this chapter (`pooled` is false).
 *
 * A freed slot must still be caught when used: the freed-handle bugs that
 * AddressSanitizer and valgrind found in free()d memory they must find in
 * a slot of the free list.  So the pool tells them: a slot on the free
 * list, or never handed out, is poisoned (ASan) and no-access (memcheck);
 * a slot handed out is fresh memory again, with undefined contents.
 * Telling valgrind costs about 15 instructions a slot even outside it (a
 * client request is a few no-op rotations the compiler may not move or
 * drop): the pool asks once, when it is made, whether valgrind runs it. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang's spelling */
#define POOL_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) /* gcc's */
#define POOL_ASAN 1
#endif
#ifdef POOL_ASAN
#include <sanitizer/asan_interface.h>
#define SLOT_FREED(pool, p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define SLOT_LINK(pool, slot) ASAN_UNPOISON_MEMORY_REGION(&(slot)->next_free, sizeof (slot)->next_free)
#define SLOT_USED(pool, p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#elif defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h> /* Debian's valgrind package; no-ops outside valgrind */
#define POOL_VALGRIND 1
#define SLOT_FREED(pool, p, n)                                                                    \
    do {                                                                                          \
        if ((pool)->valgrind)                                                                     \
            VALGRIND_MAKE_MEM_NOACCESS((p), (n));                                                 \
    } while (0)
#define SLOT_LINK(pool, slot)                                                                     \
    do {                                                                                          \
        if ((pool)->valgrind)                                                                     \
            VALGRIND_MAKE_MEM_DEFINED(&(slot)->next_free, sizeof (slot)->next_free);              \
    } while (0)
#define SLOT_USED(pool, p, n)                                                                     \
    do {                                                                                          \
        if ((pool)->valgrind)                                                                     \
            VALGRIND_MAKE_MEM_UNDEFINED((p), (n));                                                \
    } while (0)
#endif
#endif
#ifndef SLOT_FREED
#define SLOT_FREED(pool, p, n) ((void)(pool), (void)(p), (void)(n))
#define SLOT_LINK(pool, slot) ((void)(pool), (void)(slot))
#define SLOT_USED(pool, p, n) ((void)(pool), (void)(p), (void)(n))
#endif

/* A slot holds a handle while it is handed out, and the link to the next
 * free slot while it is on the free list. */
typedef union slot {
    handle_t handle;
    union slot *next_free;
} slot_t;

/* 256 slots: 12 KB, small enough for malloc's heap (its mmap threshold is
 * 128 KB at least), big enough that a slab's malloc is rare. */
#define SLAB_HANDLES 256
typedef struct slab {
    struct slab *next; /* the pool's slabs, newest first */
    slot_t slots[SLAB_HANDLES];
} slab_t;

struct handle_pool {
    loop_t *loop;      /* its loop; NULL after loop_free() */
    slot_t *free_list; /* released slots, the last released first */
    slab_t *slabs;     /* every slab, newest first */
    size_t fresh;      /* slots of slabs->slots never handed out: the last `fresh` */
    size_t live;       /* handles handed out, not yet released */
    bool valgrind;     /* valgrind runs us: tell it about the slots */
};

static handle_pool_t *pool_new(loop_t *loop)
{
    handle_pool_t *pool = calloc(1, sizeof *pool);
    if (pool != NULL)
        pool->loop = loop;
#ifdef POOL_VALGRIND
    if (pool != NULL)
        pool->valgrind = RUNNING_ON_VALGRIND != 0;
#endif
    return pool;
}

static void pool_free(handle_pool_t *pool)
{
    while (pool->slabs != NULL) {
        slab_t *slab = pool->slabs;
        pool->slabs = slab->next;
        SLOT_USED(pool, slab->slots, sizeof slab->slots); /* free() may read it */
        free(slab);
    }
    free(pool);
}

/* A slot for a new handle: the free list's top, else the next fresh slot
 * of the newest slab, else a new slab.  NULL if malloc fails. */
static handle_t *pool_get(handle_pool_t *pool)
{
    slot_t *slot = pool->free_list;
    if (slot != NULL) {
        /* The link first, as what it is (a pointer the pool wrote), then
         * the slot as fresh memory: marking the whole slot "undefined"
         * before reading the link would make the link undefined too. */
        SLOT_LINK(pool, slot);
        pool->free_list = slot->next_free;
        SLOT_USED(pool, slot, sizeof *slot);
    } else {
        if (pool->fresh == 0) {
            slab_t *slab = malloc(sizeof *slab);
            if (slab == NULL)
                return NULL;
            slab->next = pool->slabs;
            pool->slabs = slab;
            pool->fresh = SLAB_HANDLES;
            SLOT_FREED(pool, slab->slots, sizeof slab->slots);
        }
        slot = &pool->slabs->slots[SLAB_HANDLES - pool->fresh--];
        SLOT_USED(pool, slot, sizeof *slot);
    }
    pool->live++;
    return &slot->handle;
}

/* A handle's last reference is gone: its slot goes onto the free list, or,
 * once the loop is freed, the pool goes with its last handle. */
static void pool_put(handle_pool_t *pool, handle_t *handle)
{
    slot_t *slot = (slot_t *)handle;
    pool->live--;
    if (pool->loop == NULL && pool->live == 0) {
        pool_free(pool);
        return;
    }
    slot->next_free = pool->free_list;
    pool->free_list = slot;
    SLOT_FREED(pool, slot, sizeof *slot);
}
/* @end pool */

/* @region handles */
/* A new handle with one reference: its first owner's (the heap, the deque
 * or a watch table).  Chapter 11: from the loop's pool, unless another
 * thread asks (`foreign`: loop_call_soon_threadsafe), whose handle comes
 * from malloc. */
static handle_t *handle_alloc(loop_t *loop, loop_callback callback, void *arg, bool io,
                              bool foreign)
{
    handle_t *handle = foreign ? malloc(sizeof *handle) : pool_get(loop->pool);
    if (handle != NULL)
        *handle = (handle_t){.callback = callback, .arg = arg, .pool = loop->pool,
                             .refs = 1, .io = io, .pooled = !foreign};
    return handle;
}

static handle_t *handle_new(loop_t *loop, loop_callback callback, void *arg, bool io)
{
    return handle_alloc(loop, callback, arg, io, false);
}

void handle_retain(handle_t *handle)
{
    if (handle != NULL)
        handle->refs++;
}

/* The handle goes back where it came from. */
static void handle_free(handle_t *handle)
{
    if (handle->pooled)
        pool_put(handle->pool, handle);
    else
        free(handle);
}

void handle_release(handle_t *handle)
{
    if (handle != NULL && --handle->refs == 0) {
        /* Chapter 09: the reference to arg goes last, once the handle is
         * gone: dropping a task may run its finalizer, which reports to
         * the exception handler, which may do anything. */
        void (*release_arg)(void *) = handle->release_arg;
        void *arg = handle->arg;
        handle_free(handle);
        if (release_arg != NULL)
            release_arg(arg);
    }
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
        handle->pool->loop->timer_cancelled_count++;
    handle->cancelled = true;
    /* In debug mode asyncio keeps the repr of a cancelled handle.  The
     * loop is read only while it still has the handle: a kept handle may
     * be cancelled after loop_free(), when there is no loop to ask. */
    if (handle->scheduled || handle->queued || handle->running || handle->held)
        handle->named = handle->pool->loop->errors.debug;
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

/* @region inbox */
/* Chapter 11: the ready deque without a lock.  Chapter 10 took ready_lock
 * for every push, pop and length, because another thread may append
 * (loop_call_soon_threadsafe): four lock pairs per tick of chain, a
 * quarter of its instructions, for a thread that, in most programs, never
 * comes.  Now other threads append to an inbox of their own, under
 * inbox_lock, and the loop's thread moves the inbox into `ready`.  The
 * loop thread's pushes, pops and lengths touch `ready` alone: no lock.
 *
 * The order must stay the one a single deque gives (CPython's, where
 * call_soon_threadsafe appends to _ready at once).  Two rules keep it:
 *  - the loop's thread moves the inbox before each of its own pushes, so
 *    a post made before a call_soon (before in the program's order: the
 *    post's thread told the loop's thread, through anything at all) runs
 *    before it;  a post that races a push may land on either side of it,
 *    as it may in CPython;
 *  - and before each look at the length -- the poll's timeout (2a) and the
 *    snapshot (4): a post made before the snapshot runs in this tick, one
 *    made after it in the next, as in asyncio, whose ntodo counts what
 *    _ready holds at that moment.
 * The look costs an atomic load of inbox_full, a plain load on x86 and
 * ARM; the lock is taken only when the flag says a post is waiting.  The
 * flag is sequentially consistent: the loop stores `polling` and then
 * loads inbox_full, a poster stores inbox_full and then loads `polling`,
 * and with seq_cst on both sides at least one sees the other's store
 * (write_to_self's wake-up is not lost).
 *
 * Moving may need memory (ready's array grows).  If it fails, what is not
 * moved stays in the inbox, in order, and the push that asked fails too:
 * it must not overtake them.  (It can fail only when `ready` is not empty:
 * into an empty one the inbox moves by swapping the two arrays.) */
static int take_inbox(loop_t *loop)
{
    /* @exercise begin */
    /* @region ex_take_inbox */
    if (!atomic_load(&loop->inbox_full))
        return 0;
    int rc = 0;
    pthread_mutex_lock(&loop->inbox_lock);
    if (deque_len(&loop->ready) == 0) { /* the common case: swap the arrays */
        deque_t empty = loop->ready;
        loop->ready = loop->inbox;
        loop->inbox = empty;
    }
    while (rc == 0 && deque_len(&loop->inbox) > 0) {
        rc = deque_push_back(&loop->ready, deque_front(&loop->inbox));
        if (rc == 0)
            deque_pop_front(&loop->inbox);
    }
    atomic_store(&loop->inbox_full, deque_len(&loop->inbox) > 0);
    pthread_mutex_unlock(&loop->inbox_lock);
    return rc;
    /* @end ex_take_inbox */
    /* @exercise end */
}

/* The push takes the deque's reference to the handle. */
static int ready_push(loop_t *loop, handle_t *handle)
{
    /* @exercise begin */
    /* @region ex_ready_push */
    if (take_inbox(loop) < 0 || deque_push_back(&loop->ready, handle) < 0)
    /* @end ex_ready_push */
    /* @exercise end */
        return -1;
    handle->queued = true;
    handle->refs++;
    return 0;
}

static handle_t *ready_pop(loop_t *loop)
{
    return deque_pop_front(&loop->ready);
}

/* The length, after taking the inbox (the snapshot's rule, above).  If
 * the move runs out of memory, the rest of the inbox waits for the next
 * look: it was posted after what `ready` holds, and runs after it. */
static size_t ready_len(loop_t *loop)
{
    /* @exercise begin */
    /* @region ex_ready_len */
    (void)take_inbox(loop);
    /* @end ex_ready_len */
    /* @exercise end */
    size_t n = deque_len(&loop->ready);
    if (loop->look_hook != NULL) /* tests only: see loop_set_look_hook() */
        loop->look_hook(loop, n, loop->look_ctx);
    return n;
}
/* @end inbox */

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
        return fail(loop, EINVAL, "Event loop is closed");
    /* Negative, or beyond what the backend can watch: FD_SETSIZE for
     * select (chapter 01's message), the open-files limit for the others. */
    if (selector_check_fd(loop->selector, fd) < 0)
        return fail(loop, errno, "%s", selector_error(loop->selector));
    if (fd == loop->self_pipe[0] || fd == loop->self_pipe[1])
        return fail(loop, EINVAL, "fd %d is the loop's own self-pipe", fd);
    return 0;
}

/* Make both tables at least fd + 1 long; the new entries are NULL. */
static int grow(loop_t *loop, int fd)
{
    if (fd < loop->capacity)
        return 0;
    int capacity = loop->capacity ? loop->capacity : 64;
    while (capacity <= fd)
        capacity = capacity > INT_MAX / 2 ? INT_MAX : capacity * 2;
    handle_t **readers = realloc(loop->readers, (size_t)capacity * sizeof *readers);
    if (readers != NULL)
        loop->readers = readers; /* the old block is gone: keep the new one */
    handle_t **writers = readers ? realloc(loop->writers, (size_t)capacity * sizeof *writers) : NULL;
    if (writers == NULL)
        return fail(loop, ENOMEM, "out of memory for the watch tables (fd %d)", fd);
    loop->writers = writers;
    size_t added = (size_t)(capacity - loop->capacity);
    memset(loop->readers + loop->capacity, 0, added * sizeof *readers);
    memset(loop->writers + loop->capacity, 0, added * sizeof *writers);
    loop->capacity = capacity;
    return 0;
}

/* What the tables say fd is watched for. */
static int watched(const loop_t *loop, int fd)
{
    if (fd >= loop->capacity)
        return 0;
    return (loop->readers[fd] != NULL ? SELECTOR_READ : 0) |
           (loop->writers[fd] != NULL ? SELECTOR_WRITE : 0);
}

/* Tell the selector that fd must now be watched for `events`: register,
 * modify or unregister it, as asyncio's _add_reader and _remove_reader call
 * selector.register, .modify or .unregister.  Replacing a reader by
 * another changes nothing the kernel sees: no system call. */
static int update_selector(loop_t *loop, int fd, int events)
{
    int old = selector_events_of(loop->selector, fd), rc = 0;
    if (events == old)
        return 0;
    if (old == 0)
        rc = selector_register(loop->selector, fd, events);
    else if (events == 0)
        rc = selector_unregister(loop->selector, fd);
    else
        rc = selector_modify(loop->selector, fd, events);
    if (rc < 0)
        return fail(loop, errno, "%s", selector_error(loop->selector));
    return 0;
}

/* `event` is SELECTOR_READ (a reader) or SELECTOR_WRITE (a writer).  The
 * selector is told first: if it refuses (epoll and a regular file), the
 * tables are left as they were. */
static int add(loop_t *loop, int event, int fd, loop_callback callback, void *arg)
{
    if (check_fd(loop, fd) < 0)
        return -1;
    if (callback == NULL)
        return fail(loop, EINVAL, "callback for fd %d is NULL", fd);
    if (grow(loop, fd) < 0)
        return -1;
    handle_t *handle = handle_new(loop, callback, arg, true);
    if (handle == NULL)
        return fail(loop, ENOMEM, "out of memory for fd %d's handle", fd);
    if (update_selector(loop, fd, watched(loop, fd) | event) < 0) {
        handle_release(handle);
        return -1;
    }
    handle_t **table = event == SELECTOR_READ ? loop->readers : loop->writers;
    if (table[fd] != NULL) /* replaced: the old handle must not run again */
        cancel_watch(table[fd]);
    table[fd] = handle;
    return 0;
}

int loop_add_reader(loop_t *loop, int fd, loop_callback callback, void *arg)
{
    return add(loop, SELECTOR_READ, fd, callback, arg);
}
/* @end add_reader */

int loop_add_writer(loop_t *loop, int fd, loop_callback callback, void *arg)
{
    return add(loop, SELECTOR_WRITE, fd, callback, arg);
}

/* @region remove */
static int removed(loop_t *loop, int event, int fd)
{
    if (check_fd(loop, fd) < 0)
        return -1;
    if ((watched(loop, fd) & event) == 0)
        return 0;
    if (update_selector(loop, fd, watched(loop, fd) & ~event) < 0)
        return -1;
    handle_t **table = event == SELECTOR_READ ? loop->readers : loop->writers;
    cancel_watch(table[fd]);
    table[fd] = NULL;
    return 1;
}

int loop_remove_reader(loop_t *loop, int fd)
{
    return removed(loop, SELECTOR_READ, fd);
}

int loop_remove_writer(loop_t *loop, int fd)
{
    return removed(loop, SELECTOR_WRITE, fd);
}
/* @end remove */

/* @region set_backend */
/* Move the loop to another selector: open it, register every watched fd
 * with it, then close the old one.  If one fd cannot be moved (fd 1500 to
 * select, a regular file to epoll), nothing changes. */
int loop_set_backend(loop_t *loop, const char *name)
{
    if (loop->closed)
        return fail(loop, EINVAL, "Event loop is closed");
    if (loop->running)
        return fail(loop, EBUSY, "cannot change the backend of a running loop");
    char err[160];
    selector_t *sel = selector_open(name, err, sizeof err);
    if (sel == NULL)
        return fail(loop, errno, "%s", err);
    for (int fd = 0; fd < loop->capacity; fd++) {
        int events = watched(loop, fd);
        if (events != 0 && selector_register(sel, fd, events) < 0) {
            int saved = errno;
            fail(loop, saved, "cannot move the loop to %s: %s", selector_name(sel),
                 selector_error(sel));
            selector_close(sel);
            errno = saved;
            return -1;
        }
    }
    selector_close(loop->selector);
    loop->selector = sel;
    loop->backend = selector_name(sel);
    return 0;
}

const char *loop_backend(const loop_t *loop)
{
    return loop->backend;
}

const char *loop_backends(void)
{
    return selector_backends();
}
/* @end set_backend */

/* @region check_thread */
/* A token per thread: its address tells threads apart, as
 * threading.get_ident() does, and fits in an atomic pointer (a pthread_t
 * need not). */
static _Thread_local char thread_token;

/* base_events._check_thread(), which call_soon and call_at run in debug
 * mode:
 *     if self._thread_id is None:
 *         return
 *     thread_id = threading.get_ident()
 *     if thread_id != self._thread_id:
 *         raise RuntimeError(
 *             "Non-thread-safe operation invoked on an event loop other "
 *             "than the current one")
 * Its point is to catch the bug this chapter is about: a thread that calls
 * call_soon where it should call call_soon_threadsafe.  The thread id is
 * read atomically: the other thread reads it while the loop's thread may
 * be writing it at the start or end of loop_run_forever(). */
static int check_thread(loop_t *loop)
{
    if (!loop->errors.debug)
        return 0;
    const void *id = atomic_load(&loop->thread_id);
    if (id == NULL || id == &thread_token)
        return 0;
    return fail(loop, EPERM, "Non-thread-safe operation invoked on an event loop other than "
                             "the current one");
}
/* @end check_thread */

/* The same check for future.c and gather.c, whose callbacks CPython
 * schedules with loop.call_soon (a task's steps, a future's done
 * callbacks): in debug mode, create_task from another thread is refused. */
int loop_check_thread(loop_t *loop)
{
    return check_thread(loop);
}

/* @region call_soon */
handle_t *loop_call_soon(loop_t *loop, loop_callback callback, void *arg)
{
    if (loop->closed) {
        fail(loop, EINVAL, "Event loop is closed");
        return NULL;
    }
    if (check_thread(loop) < 0) /* chapter 10: debug mode only */
        return NULL;
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
    unsigned char buf[4096];
    for (;;) {
        ssize_t n = read(loop->self_pipe[0], buf, sizeof buf);
        if (n > 0 && loop->wakeup == LOOP_WAKEUP_PIPE) /* chapter 08: signal numbers */
            signals_process(loop, buf, (size_t)n);
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
     * more would wake nobody either.
     * Chapter 11: by default, for other threads only.  The loop's own
     * thread writes asyncio's byte each time (set_debug, a signal, a
     * callback calling call_soon_threadsafe): those bytes are part of the
     * ticks CPython makes, which the traces compare one for one.  So is the
     * byte of a loop that is not running, whoever writes it: it waits in
     * the pipe, and the next run spends a tick reading it, as CPython's
     * does (`threadsafe` before `run_forever` in a scenario).  Another
     * thread's byte while the loop runs only races with the loop: skipping
     * it changes when the loop wakes, never what runs or in which order --
     * every post is in the inbox, which the loop takes before it sleeps. */
    /* @region coalesce */
    const void *runner = atomic_load(&loop->thread_id);
    bool may_skip = loop->coalesce == COALESCE_ALWAYS ||
                    (loop->coalesce == COALESCE_OTHER_THREADS &&
                     runner != NULL && runner != &thread_token);
    if (may_skip && (!atomic_load(&loop->polling) ||
                     atomic_exchange(&loop->wakeup_pending, true)))
        return;
    /* @end coalesce */
    /* eventfd adds 1 to its counter; a pipe gets asyncio's b'\0', which
     * signals_process() tells from a signal's number (chapter 08). */
    static const uint64_t one = 1;
    static const unsigned char zero = 0;
    const void *what = loop->wakeup == LOOP_WAKEUP_EVENTFD ? (const void *)&one : &zero;
    size_t size = loop->wakeup == LOOP_WAKEUP_EVENTFD ? sizeof one : 1;
    int saved = errno;
    atomic_fetch_add_explicit(&loop->wakeup_writes, 1, memory_order_relaxed);
    while (write(loop->self_pipe[1], what, size) < 0 && errno == EINTR)
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
    /* Its read end is watched like any reader: in the tables and by the
     * selector (which may refuse it: select, if the fd is >= FD_SETSIZE). */
    handle_t *reader = handle_new(loop, read_from_self, NULL, true);
    if (reader == NULL || grow(loop, fds[0]) < 0 ||
        update_selector(loop, fds[0], SELECTOR_READ) < 0) {
        if (reader == NULL)
            fail(loop, ENOMEM, "out of memory for the self-pipe");
        int err = errno;
        handle_release(reader);
        close(fds[0]);
        if (fds[1] != fds[0])
            close(fds[1]);
        errno = err;
        return -1;
    }
    loop->self_pipe[0] = fds[0];
    loop->self_pipe[1] = fds[1];
    loop->wakeup = how;
    loop->readers[fds[0]] = reader;
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
        return fail(loop, EINVAL, "Event loop is closed");
    if (loop->running)
        return fail(loop, EBUSY, "cannot change the wake-up of a running loop");
    if (how != LOOP_WAKEUP_PIPE && how != LOOP_WAKEUP_EVENTFD)
        return fail(loop, EINVAL, "unknown wake-up %d", (int)how);
    if (loop->signals.count > 0) /* signals.c writes to the old pipe (chapter 08) */
        return fail(loop, EBUSY, "cannot change the wake-up while signal handlers "
                                 "are installed: remove them first");
    int old[2] = {loop->self_pipe[0], loop->self_pipe[1]};
    handle_t *old_reader = loop->readers[old[0]];
    loop->readers[old[0]] = NULL;
    if (make_self_pipe(loop, how) < 0) {
        loop->readers[old[0]] = old_reader; /* keep the old one */
        return -1;
    }
    update_selector(loop, old[0], 0); /* unregister the old read end */
    cancel_watch(old_reader);
    if (old[1] != old[0])
        close(old[1]);
    close(old[0]);
    loop->coalesce = coalesce != 0 ? COALESCE_ALWAYS : COALESCE_NEVER;
    return 0;
}
unsigned long loop_wakeup_writes(loop_t *loop)
{
    return atomic_load_explicit(&loop->wakeup_writes, memory_order_relaxed);
}
/* @end self_pipe */

/* @region threadsafe */
/* Chapter 10: the handle may own its arg (loop_private.h). */
static handle_t *call_soon_threadsafe(loop_t *loop, loop_callback callback, void *arg,
                                      void (*release_arg)(void *arg))
{
    /* No fail() here: loop->error belongs to the loop's thread. */
    if (callback == NULL) {
        errno = EINVAL;
        return NULL;
    }
    handle_t *handle = handle_alloc(loop, callback, arg, false, true); /* malloc's */
    if (handle == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    /* loop_call_soon's steps, with `closed` read under the lock: a loop
     * closed by its own thread meanwhile refuses, it does not lose the call.
     * The reference handle_new() made becomes the deque's. */
    pthread_mutex_lock(&loop->inbox_lock);
    int err = loop->closed ? EINVAL : 0;
    if (err == 0 && deque_push_back(&loop->inbox, handle) < 0)
        err = ENOMEM;
    if (err == 0) {
        handle->queued = true;
        handle->release_arg = release_arg; /* before anyone else can see it */
        atomic_store(&loop->inbox_full, true); /* chapter 11: see "inbox" */
    }
    pthread_mutex_unlock(&loop->inbox_lock);
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

handle_t *loop_call_soon_threadsafe(loop_t *loop, loop_callback callback, void *arg)
{
    return call_soon_threadsafe(loop, callback, arg, NULL);
}

handle_t *loop_call_soon_threadsafe_owned(loop_t *loop, loop_callback callback, void *arg,
                                          void (*release_arg)(void *arg))
{
    return call_soon_threadsafe(loop, callback, arg, release_arg);
}
/* @end threadsafe */

/* @region call_at */
handle_t *loop_call_at(loop_t *loop, double when, loop_callback callback, void *arg)
{
    if (loop->closed) {
        fail(loop, EINVAL, "Event loop is closed");
        return NULL;
    }
    if (check_thread(loop) < 0) /* chapter 10: debug mode only */
        return NULL;
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
        handle_free(handle);
        fail(loop, ENOMEM, "out of memory for the timer heap");
        return NULL;
    }
    handle->scheduled = true; /* the heap's reference is the one handle_new made */
    handle->timer = true;
    handle->when = when;
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

/* @region by_fd */
/* Ready events in increasing fd order.  See step 2c of run_once. */
static int by_fd(const void *a, const void *b)
{
    const selector_event *x = a, *y = b;
    return (x->fd > y->fd) - (x->fd < y->fd);
}
/* @end by_fd */

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

    /* @region poll */
    /* 2a. How long may the poll wait?  Not at all with callbacks in the
     *    ready deque, or a stop requested; until the nearest timer, if
     *    there is one (never less than 0, never more than a day); else for
     *    as long as it takes (-1).  asyncio's lines, one for one. */
    atomic_store(&loop->polling, true); /* BEFORE the look: see write_to_self */
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
     *    clock), and the selector only looks. */
    if (loop->wait_hook != NULL)
        timeout = loop->wait_hook(loop, timeout, loop->wait_ctx);
    selector_event *events;
    int n = selector_wait(loop->selector, timeout, &events);
    atomic_store(&loop->polling, false);
    if (n < 0) {
        if (errno == EINTR) /* a signal ended the wait: just tick again */
            return 0;
        return fail(loop, errno, "%s", selector_error(loop->selector));
    }
    /* @end poll */

    /* @region process_events */
    /* 2c. Queue the handles of the ready fds behind what is already queued:
     *    asyncio's _process_events -> _add_callback, reader before writer.
     *    In increasing fd order, whatever order the kernel chose: select
     *    gives that order, poll, epoll and kqueue do not (epoll's is the
     *    order in which fds became ready).  asyncio keeps the kernel's
     *    order; this loop sorts, so that one program prints the same trace
     *    on every backend -- O(k log k) for k ready fds, nothing for idle
     *    ones.  Nothing runs here, so the tables still hold the handles the
     *    selector was told about; the checks only skip an event the kernel
     *    reports for an fd no longer watched (epoll and a closed dup()). */
    if (n > 1)
        qsort(events, (size_t)n, sizeof *events, by_fd);
    /* A handle that is queued already is not queued twice after a tick
     * that ran out of memory here (or in the next step): it returned with
     * part of its work queued, and the fd, still ready, is reported again.
     * Chapter 08: only then.  A callback that escapes (KeyboardInterrupt)
     * also leaves the rest of its tick queued, and CPython then queues a
     * reader that is still ready a second time: it runs twice. */
    bool guard = loop->requeue_guard;
    for (int i = 0; i < n; i++) {
        int fd = events[i].fd;
        if ((events[i].events & SELECTOR_READ) && fd < loop->capacity &&
            loop->readers[fd] != NULL && !(guard && loop->readers[fd]->queued) &&
            add_callback(loop, loop->readers[fd]) < 0)
            return loop->requeue_guard = true, -1;
        if ((events[i].events & SELECTOR_WRITE) && fd < loop->capacity &&
            loop->writers[fd] != NULL && !(guard && loop->writers[fd]->queued) &&
            add_callback(loop, loop->writers[fd]) < 0)
            return loop->requeue_guard = true, -1;
    }
    /* @end process_events */

    /* 3. Move the timers that are due to the back of the ready deque, in
     *    heap order.  "Due" is `when < now + clock_resolution`: a timer
     *    whose deadline is within one clock tick of now would otherwise
     *    cost a useless wait of less than the clock can measure. */
    /*    Chapter 11: the clock is read only when there is a timer to
     *    compare it with.  asyncio reads it every tick; nothing else uses
     *    the value, and a tick of chain spent 12 % of its time reading it. */
    double now = heap_len(&loop->scheduled) > 0 ? loop_time(loop) : 0;
    double end_time = now + loop->clock_resolution;
    while (heap_len(&loop->scheduled) > 0) {
        double when = heap_top(&loop->scheduled)->when;
        if (loop->miniloop ? when > now : when >= end_time)
            break;
        /* Queued first (even if cancelled), popped after: if the deque
         * cannot grow, the timer stays in the heap, and the run fails with
         * nothing lost. */
        if (add_callback(loop, heap_top(&loop->scheduled)->handle) < 0)
            return loop->requeue_guard = true, -1;
        heap_entry_t timer;
        heap_pop(&loop->scheduled, &timer);
        timer.handle->scheduled = false;
        handle_release(timer.handle); /* the heap's reference */
    }
    loop->requeue_guard = false; /* everything due is queued, once */

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
         * watch table or a caller still holds one.
         * Chapter 08: the call is Handle._run's (handler.c): a callback
         * that failed goes to the exception handler and the tick goes on;
         * one that raised KeyboardInterrupt or SystemExit ends the tick and
         * the run here, leaving the rest of the snapshot in the deque for
         * the next loop_run_forever(). */
        int escaped = 0;
        if (!handle->cancelled) {
            handle->running = true;
            escaped = errors_run_handle(loop, handle, handle->callback, handle->arg);
            handle->running = false;
        }
        handle_release(handle);
        if (escaped)
            return -1; /* handler.c said why: loop_error(), errno EINTR */
    }
    return 0;
}
/* @end run_once */

/* @region run_forever */
/* asyncio's events._get_running_loop(): the loop this thread is running. */
static _Thread_local loop_t *running_loop;

loop_t *loop_get_running_loop(void)
{
    return running_loop;
}

int loop_run_forever(loop_t *loop)
{
    /* _check_closed, then _check_running: CPython's order and words. */
    if (loop->closed)
        return fail(loop, EINVAL, "Event loop is closed");
    if (loop->running)
        return fail(loop, EBUSY, "This event loop is already running");
    if (running_loop != NULL)
        return fail(loop, EBUSY, "Cannot run the event loop while another loop is running");
    loop->running = true;
    running_loop = loop;
    atomic_store(&loop->thread_id, &thread_token); /* self._thread_id = threading.get_ident() */
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
    /* run_forever's `finally`: also after an error or an escape, so a
     * stop() asked for in the tick that escaped is forgotten, as there. */
    loop->stopping = false;
    loop->running = false;
    running_loop = NULL;
    atomic_store(&loop->thread_id, NULL); /* self._thread_id = None */
    return rc;
}

void loop_stop(loop_t *loop)
{
    loop->stopping = true;
}

/* @region states */
int loop_is_running(const loop_t *loop)
{
    return loop->running;
}

int loop_is_closed(const loop_t *loop)
{
    return loop->closed;
}

loop_state loop_get_state(const loop_t *loop)
{
    if (loop->closed)
        return LOOP_CLOSED;
    if (loop->running)
        return loop->stopping ? LOOP_STOPPING : LOOP_RUNNING;
    return LOOP_NEW;
}

const char *loop_state_name(loop_state state)
{
    switch (state) {
    case LOOP_NEW:      return "NEW";
    case LOOP_RUNNING:  return "RUNNING";
    case LOOP_STOPPING: return "STOPPING";
    case LOOP_CLOSED:   return "CLOSED";
    }
    return "?";
}
/* @end states */

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
    for (int fd = 0; fd < loop->capacity; fd++) {
        if (loop->readers[fd] != NULL)
            cancel_watch(loop->readers[fd]);
        if (loop->writers[fd] != NULL)
            cancel_watch(loop->writers[fd]);
        loop->readers[fd] = loop->writers[fd] = NULL;
    }
    selector_close(loop->selector); /* closes epoll's or kqueue's fd */
    loop->selector = NULL;
    pthread_mutex_lock(&loop->inbox_lock);
    loop->closed = true; /* from here on, loop_call_soon_threadsafe refuses */
    deque_t posted = loop->inbox; /* chapter 11: dropped after `ready`, as posted later */
    deque_init(&loop->inbox);
    atomic_store(&loop->inbox_full, false);
    pthread_mutex_unlock(&loop->inbox_lock);
    deque_t *dropped[] = {&loop->ready, &posted};
    for (int i = 0; i < 2; i++) {
        while (deque_len(dropped[i]) > 0) { /* released outside the lock */
            handle_t *handle = deque_pop_front(dropped[i]);
            handle->queued = false;
            handle_release(handle);
        }
        deque_free(dropped[i]);
    }
    heap_entry_t timer;
    while (heap_pop(&loop->scheduled, &timer)) {
        timer.handle->scheduled = false;
        handle_release(timer.handle);
    }
    heap_free(&loop->scheduled);
    loop->timer_cancelled_count = 0;
    signals_close(loop); /* last, as unix_events' close() */
}

int loop_close(loop_t *loop)
{
    if (loop->running)
        return fail(loop, EBUSY, "Cannot close a running event loop");
    if (loop->closed)
        return 0; /* closing twice is harmless, as in asyncio */
    forget_all(loop); /* sets closed, under inbox_lock */
    /* Chapter 10: self._executor_shutdown_called = True, and the default
     * executor shut down without waiting (bridge.c). */
    executors_loop_close(loop);
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
    bool was_closed = loop->closed;
    forget_all(loop);
    if (!was_closed) /* as loop_close() does, if the caller did not call it */
        executors_loop_close(loop);
    /* Chapter 10: no other thread may reach the loop once it is gone: the
     * default executor the loop made is waited for and freed, and every
     * chain a job could still come home through is cut (bridge.c). */
    executors_loop_free(loop);
    free(loop->readers);
    free(loop->writers);
    /* The pipe outlives loop_close(), unlike asyncio's: a thread that races
     * with the close may still write to it, and the number of a closed fd
     * can be handed at once to an unrelated open().  loop_free() comes after
     * every other thread is done with the loop (loop.h). */
    close_self_pipe(loop);
    /* Chapter 09: futures and tasks nobody will ever complete (a task
     * waiting for a future nobody sets: task -> future -> callback ->
     * task) are a cycle no reference count breaks; future.c reports the
     * pending tasks and breaks them, while the loop and its exception
     * handler still exist. */
    futures_loop_free(loop);
    /* Chapter 11: the pool stays while a caller keeps a handle ("pool"). */
    loop->pool->loop = NULL;
    if (loop->pool->live == 0)
        pool_free(loop->pool);
    pthread_mutex_destroy(&loop->inbox_lock);
    free(loop);
}
/* @end close */

/* @region private */
/* What handler.c and signals.c may use (loop_private.h). */
loop_errors_t *loop_errors(loop_t *loop)
{
    return &loop->errors;
}

loop_signals_t *loop_signals(loop_t *loop)
{
    return &loop->signals;
}

void handle_info(const handle_t *handle, handle_info_t *info)
{
    *info = (handle_info_t){.loop = handle->pool->loop, .callback = handle->callback,
                            .arg = handle->arg, .timer = handle->timer, .when = handle->when,
                            .cancelled = handle->cancelled, .named = handle->named};
}

handle_t *loop_new_handle(loop_t *loop, loop_callback callback, void *arg)
{
    return handle_new(loop, callback, arg, false);
}

void handle_set_held(handle_t *handle, bool held)
{
    handle->held = held;
}

int loop_add_callback_signalsafe(loop_t *loop, handle_t *handle)
{
    if (!handle->cancelled && add_callback(loop, handle) < 0)
        return -1;
    write_to_self(loop);
    return 0;
}

int loop_signal_fd(const loop_t *loop)
{
    return loop->wakeup == LOOP_WAKEUP_PIPE ? loop->self_pipe[1] : -1;
}

/* Chapter 10: what bridge.c keeps in the loop. */
loop_executors_t *loop_executors(loop_t *loop)
{
    return &loop->executors;
}

/* Chapter 09: what future.c and task.c need of the loop. */
loop_tasks_t *loop_tasks(loop_t *loop)
{
    return &loop->tasks;
}

void handle_set_release(handle_t *handle, void (*release_arg)(void *arg))
{
    handle->release_arg = release_arg;
}

/* Make room for n more handles in the ready deque, so that the next n
 * loop_push_ready() cannot fail: the ring grows as deque.c's grow() does
 * (a power of two, the live items copied front first). */
int loop_reserve_ready(loop_t *loop, size_t n)
{
    /* Chapter 11: the inbox first, as before any push ("inbox"); the
     * pushes that follow do not take it, or they would use up the room. */
    if (take_inbox(loop) < 0)
        return fail(loop, ENOMEM, "out of memory for the ready deque");
    deque_t *d = &loop->ready;
    int rc = 0;
    if (d->cap - d->len < n) {
        size_t cap = d->cap ? d->cap : 8;
        while (cap - d->len < n && cap <= SIZE_MAX / 2 / sizeof *d->items)
            cap *= 2;
        handle_t **items = cap - d->len >= n ? malloc(cap * sizeof *items) : NULL;
        if (items == NULL) {
            rc = -1;
        } else {
            for (size_t i = 0; i < d->len; i++)
                items[i] = d->items[(d->head + i) & (d->cap - 1)];
            free(d->items);
            d->items = items;
            d->head = 0;
            d->cap = cap;
        }
    }
    if (rc < 0)
        return fail(loop, ENOMEM, "out of memory for the ready deque");
    return 0;
}

void loop_push_ready(loop_t *loop, handle_t *handle)
{
    int rc = deque_push_back(&loop->ready, handle); /* room was reserved: cannot fail */
    (void)rc;
    handle->queued = true; /* the reference loop_new_handle() made is now the deque's */
}
/* @end private */
