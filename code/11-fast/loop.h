/* loop.h -- chapter 08: a loop over a selector (select, poll, epoll or
 * kqueue) with a ready deque and a timer heap;
 * each tick runs only the callbacks that were ready when it began, a
 * scheduled callback can be cancelled (cancelled timers are cleaned up
 * lazily, as CPython does), and other threads can hand the loop callbacks
 * (loop_call_soon_threadsafe, which wakes it through a self-pipe).
 * Chapter 08: the loop's states and CPython's refusals; callbacks that fail
 * (handler.h); Unix signals as callbacks (signals.h); debug mode.
 * Chapter 09: futures, tasks and coroutines are built on this interface,
 * in their own headers (future.h, task.h, coro.h); a program of this stage
 * includes task.h, which includes the others and this one.  What the loop
 * itself learns is small: loop_free() finds the tasks nobody will ever
 * wake (below).
 *
 * The whole interface of this stage: make a loop, tell it which file
 * descriptors to watch and what to call when one is ready, ask it to call
 * something soon or at a time, run it until somebody calls loop_stop(),
 * close it.  Names
 * follow asyncio's BaseEventLoop so that the articles map onto this file
 * without a table.
 *
 * Errors: every function that can fail returns -1 (or NULL), sets errno,
 * and leaves a sentence a person can act on in loop_error(loop).
 *
 * Threads: a loop belongs to the thread that runs it.  Only
 * loop_call_soon_threadsafe() and loop_wakeup_writes() may be called from
 * other threads; handles (retain, release, cancel) are not thread-safe either.
 * Chapter 10: executor.h adds the functions that let threads and the loop
 * work together (run_in_executor, run_coroutine_threadsafe), and debug
 * mode catches the classic mistake (see "threadsafe" below).
 */
#ifndef LOOP_H
#define LOOP_H

#include <stddef.h>

typedef struct loop loop_t;

/* Every callback in this book has this one shape: the loop that runs it and
 * the pointer that was given when it was registered. */
typedef void (*loop_callback)(loop_t *loop, void *arg);

/* @region handle */
/* A handle is one call the loop will make: a callback and its arg, as
 * asyncio's Handle.  Its fields are private to loop.c. */
typedef struct handle handle_t;
/* @end handle */

/* Chapter 08's two new headers: failing callbacks, debug mode (handler.h);
 * signals (signals.h). */
#include "handler.h"
#include "signals.h"

/* @region ownership */
/* Who owns a handle, and until when a pointer to it may be used.
 *
 * loop_call_soon(), loop_call_later() and loop_call_at() return a BORROWED
 * pointer: the loop owns the handle, and the pointer stays valid until the
 * loop lets go of it, which happens
 *   - right after its callback has returned, or
 *   - for a cancelled handle, when the loop drops it: when it reaches the
 *     head of the heap or the front of the ready deque, when the heap is
 *     rebuilt, or at loop_close();
 * whichever comes first.  A caller that never touches the handle again (all
 * the code of chapters 02 to 04) needs to do nothing.  A caller that may
 * cancel it later -- a timeout that a reply cancels, a callback that
 * cancels another one -- may use the borrowed pointer as long as it knows
 * the callback has not run yet; when it cannot know that, it KEEPS the
 * handle: handle_retain() right away (before control returns to the loop),
 * and handle_release() when done with it.  A kept handle is never freed
 * under its keeper: handle_cancel() on it is safe after the callback ran,
 * twice, or after loop_close() and loop_free().
 *
 * Inside a callback, the running handle is valid until the callback
 * returns: the callback may cancel it (nothing happens: it already runs)
 * or retain it.  This is reference counting with one count per owner: the
 * heap, the ready deque and each keeper. */
void handle_retain(handle_t *handle);  /* NULL is ignored */
void handle_release(handle_t *handle); /* NULL is ignored */

/* asyncio's Handle.cancel(): the callback will not be called.  The handle
 * is not removed from where it waits -- the timer heap or the ready deque
 * -- but skipped when the loop meets it (lazy deletion).  A timer still in
 * the heap is counted in loop_timer_cancelled_count(), once; cancelling a
 * handle that already ran, runs or was cancelled changes nothing else.
 * NULL is ignored. */
void handle_cancel(handle_t *handle);

/* asyncio's Handle.cancelled(): 1 if the handle was cancelled, 0 if not.
 * NULL is not a handle: -1 with errno EINVAL (so `if (handle_cancelled(h))`
 * reads a NULL -- a call that was refused and will never run -- as
 * cancelled). */
int handle_cancelled(const handle_t *handle);
/* @end ownership */

/* A new loop on the real clock (CLOCK_MONOTONIC), or NULL with errno set
 * (ENOMEM; EINVAL for a LOOP_BACKEND this build does not have, below, and
 * on the select backend when the self-pipe's read end would be an fd >=
 * FD_SETSIZE, which select() cannot watch -- make the loop before the
 * program opens that many fds; EMFILE when no fd is left for it). */
loop_t *loop_new(void);

/* @region backends */
/* Since chapter 07 the loop waits in a selector (selector.h), on one of
 * several backends: "epoll", "kqueue", "poll" or "select".
 *   - loop_new() and loop_new_virtual() use the one named by the
 *     environment variable LOOP_BACKEND, if it is set and not empty (so a
 *     test suite runs unchanged on each backend: LOOP_BACKEND=poll ./check),
 *     else the platform's best: epoll on Linux, kqueue on macOS and the BSDs.
 *   - loop_set_backend() moves a loop that is not running to another one;
 *     every watched fd is registered with the new selector, and if one
 *     cannot be (fd 1500 to select, a regular file to epoll) nothing
 *     changes.  The demos' --backend=NAME option calls it.
 * Which fds a loop accepts depends on its backend: select refuses fds >=
 * FD_SETSIZE, the others only fds the process cannot have open; epoll
 * refuses regular files (EPERM) and fds that are not open (EBADF) at
 * loop_add_reader(), where select and poll accept them.  A regular file's
 * reader: select and poll call it at every tick (a file is always
 * readable); kqueue only while the file offset is before the end of the
 * file (an empty file: never). */
#define LOOP_HAS_BACKENDS 1

/* The backends of this build, best first: "epoll poll select" on Linux. */
const char *loop_backends(void);

/* Move the loop to backend `name` (NULL or "": the platform's best).
 * -1 with EINVAL for an unknown name or a closed loop, EBUSY if running. */
int loop_set_backend(loop_t *loop, const char *name);

/* The name of the loop's backend. */
const char *loop_backend(const loop_t *loop);
/* @end backends */

/* @region virtual */
/* A new loop on a VIRTUAL clock: loop_time() starts at 0.0 and moves only
 * when the loop waits.  Where a real loop would sleep in the selector, the loop
 * calls its wait hook instead (below); the default hook "autojumps": a
 * wait of T seconds sets the clock to now + T at once, and a wait without
 * a timeout becomes a real, blocking wait (only real I/O can end it).
 * So a program of timers runs in no wall time and prints the same times
 * on every run: the pinned outputs use it.  (Trio's autojump clock and
 * CPython's test_utils.TestLoop do the same.) */
loop_t *loop_new_virtual(void);

/* The wait hook: called once per tick, at the selector step, with the
 * timeout the loop computed: seconds >= 0, or -1 for "block until an fd is
 * ready".  It stands for the waiting: it may move the virtual clock
 * (loop_set_time), make fds ready (write to a socketpair), call
 * loop_stop().  It returns the timeout of the real wait that follows:
 * 0 to only look at the fds, -1 to block.  The real clock's loop has no
 * hook by default; a hook on it may observe, not move, the clock. */
typedef double (*loop_wait_hook)(loop_t *loop, double timeout, void *ctx);

/* Install a hook (ctx is passed to it); NULL restores the default. */
void loop_set_wait_hook(loop_t *loop, loop_wait_hook hook, void *ctx);

/* Set a virtual clock to now.  Refused (-1, EINVAL) on the real clock, for
 * a NaN or infinite now, and backwards: time is monotonic. */
int loop_set_time(loop_t *loop, double now);
/* @end virtual */

/* Watch fd for reading (writing); call callback(loop, arg) each time the
 * selector says it is ready, until it is removed: the watch's handle is
 * appended to the ready deque and runs in turn with the other ready
 * callbacks.  Adding a
 * reader to an fd that has one replaces it, as asyncio's add_reader does.
 * Refused with -1 and errno EBADF for a negative fd; EINVAL for an fd >=
 * FD_SETSIZE on the select backend (select() cannot watch it, and FD_SET
 * with such an fd writes past the end of the fd_set), for an fd above the
 * open-files limit on the others, for a NULL callback, and for the loop's
 * own fds (its self-pipe's, epoll's or kqueue's); on epoll, EPERM
 * for a regular file or a directory and EBADF for an fd that is not open;
 * ENOMEM.  A refused call changes nothing.  Remove the watch BEFORE closing
 * the fd (libuv and libev ask the same; no loop can repair the other
 * order).  An fd closed while watched makes select's and poll's next tick
 * fail (-1, EBADF, the fd in the message); kqueue forgets it.  epoll
 * forgets it only if no dup() of it (in this process or a fork()ed child)
 * keeps its open file alive: while one does, the kernel still reports the
 * file under the old number, and the callback runs at every tick the file
 * is ready.  Removing such a watch afterwards works on every backend, and
 * then the loop blocks again (epoll replaces its instance: selector.h). */
int loop_add_reader(loop_t *loop, int fd, loop_callback callback, void *arg);
int loop_add_writer(loop_t *loop, int fd, loop_callback callback, void *arg);

/* Stop watching fd.  Returns 1 if a reader (writer) was removed, 0 if there
 * was none, -1 if refused: errno EBADF for a negative fd, EINVAL for an fd
 * out of range or a closed loop.  Safe from inside any callback,
 * including the fd's own.  A watch that is removed (or replaced) after its
 * handle was queued in this tick is not called: asyncio cancels the handle. */
int loop_remove_reader(loop_t *loop, int fd);
int loop_remove_writer(loop_t *loop, int fd);

/* @region call_soon */
/* Arrange for callback(loop, arg) to be called once, as soon as possible: the
 * handle is appended to the ready deque, so callbacks run in the order they
 * were scheduled (FIFO).  Safe from inside any callback, not from another
 * thread (see loop_call_soon_threadsafe).  Returns the handle, or NULL with errno set: EINVAL
 * for a NULL callback or a closed loop, ENOMEM.
 *
 * Who owns the handle: the loop; the pointer returned is borrowed (see
 * "ownership" above: valid until the callback has returned, or until a
 * cancelled handle is dropped; handle_retain() to keep it longer). */
handle_t *loop_call_soon(loop_t *loop, loop_callback callback, void *arg);
/* @end call_soon */

/* @region call_later */
/* The loop's clock, in seconds (double, as asyncio's loop.time()): the real
 * CLOCK_MONOTONIC, or the virtual clock of loop_new_virtual(). */
double loop_time(loop_t *loop);

/* Arrange for callback(loop, arg) to be called once, at loop_time() `when`
 * or as soon as possible after: asyncio's call_at.  The handle goes into
 * the timer heap, `scheduled`; at the tick where it is due it is moved to
 * the BACK of the ready deque, behind what call_soon queued already.
 * Timers with equal deadlines are NOT run first-in first-out: they leave
 * the heap in the order CPython's heapq gives them.  Returns the handle,
 * or NULL with errno set: EINVAL for a NULL callback, a closed loop, a NaN
 * or infinite when; ENOMEM.  Who owns the handle: as for loop_call_soon. */
handle_t *loop_call_at(loop_t *loop, double when, loop_callback callback, void *arg);

/* loop_call_at(loop, loop_time(loop) + delay, ...): asyncio's call_later.
 * A delay of 0 or less is due at the next tick (and a more negative one
 * first: call_later(-1, a) then call_later(-2, b) run b, then a).  A NaN
 * or infinite delay is refused (EINVAL). */
handle_t *loop_call_later(loop_t *loop, double delay, loop_callback callback, void *arg);
/* @end call_later */

/* @region run_forever */
/* Run ticks until loop_stop() is called.  Refused, as asyncio refuses it,
 * with -1 and: EINVAL "Event loop is closed"; EBUSY "This event loop is
 * already running" (from one of its callbacks); EBUSY "Cannot run the
 * event loop while another loop is running" (from a callback of another
 * loop of this thread).  A callback that raised KeyboardInterrupt or
 * SystemExit (handler.h) ends the run at once: -1 with EINTR, and
 * loop_error() says "KeyboardInterrupt: MESSAGE"; the loop is stopped, not
 * closed, and the handles still in the ready deque run at the next
 * loop_run_forever().
 * Returns 0 after a stop, -1 if
 * the selector failed (not for EINTR: a signal only ends the current
 * wait), for instance because a watched fd was closed (select, poll).
 *
 * Out of memory while a tick queues the handles of ready fds or of due
 * timers, it returns -1 with ENOMEM before that tick runs any callback, and
 * loses nothing: what could not be queued waits where it was (a ready fd
 * is reported again, a timer stays in the heap), and a later
 * loop_run_forever() runs everything, once, in the order an uninterrupted
 * run would have.  (Every call that allocates is the same: refused with
 * ENOMEM, it changes nothing.) */
int loop_run_forever(loop_t *loop);
/* @end run_forever */

/* @region states */
/* The loop's life, as article 004 (2.1) draws it: NEW (not running, not
 * closed: new, or stopped and ready to run again -- CPython does not tell
 * the two apart either), RUNNING (inside loop_run_forever()), STOPPING
 * (running, loop_stop() called: this tick is its last), CLOSED. */
typedef enum loop_state { LOOP_NEW, LOOP_RUNNING, LOOP_STOPPING, LOOP_CLOSED } loop_state;
loop_state loop_get_state(const loop_t *loop);
const char *loop_state_name(loop_state state); /* "NEW", "RUNNING", ... */
int loop_is_running(const loop_t *loop);      /* asyncio's is_running() */
int loop_is_closed(const loop_t *loop);       /* asyncio's is_closed() */

/* The loop the calling thread is running (inside its loop_run_forever()),
 * or NULL: asyncio's events._get_running_loop(). */
loop_t *loop_get_running_loop(void);
/* @end states */

/* @region rules */
/* A teaching device, not a feature.  LOOP_RULES_MINILOOP runs the loop by
 * the rules of article 000's 50-line MiniLoop (6.1.2) instead of asyncio's,
 * so that one scenario can be traced both ways (trace --rules=miniloop):
 *   - the poll waits for the nearest timer even with callbacks ready (no
 *     timeout 0 for a non-empty ready deque or a stop);
 *   - after the poll, timers with when <= now are due (no clock_resolution);
 *   - loop_run_forever() returns as soon as the ready deque and the timer
 *     heap are both empty (MiniLoop.run), even with fds watched.
 * Everything else -- the snapshot, the order -- is the same.
 * LOOP_RULES_NO_REBUILD is asyncio's rules but for one thing: step 1 never
 * rebuilds the heap, so cancelled timers leave it only when they reach its
 * head (bench_cancel draws what that costs). */
typedef enum loop_rules { LOOP_RULES_ASYNCIO, LOOP_RULES_MINILOOP, LOOP_RULES_NO_REBUILD } loop_rules;
void loop_set_rules(loop_t *loop, loop_rules rules);
/* @end rules */

/* @region accounting */
/* What CPython's tests read as len(loop._scheduled) and
 * loop._timer_cancelled_count: the number of timers in the heap, cancelled
 * ones included, and the number of those that were cancelled while in it.
 * Step 1 of a tick drops cancelled timers from the head of the heap, or
 * rebuilds the heap without them when more than LOOP_MIN_SCHEDULED_TIMER_HANDLES
 * timers are scheduled and more than LOOP_MIN_CANCELLED_TIMER_HANDLES_FRACTION
 * of them are cancelled. */
#define LOOP_MIN_SCHEDULED_TIMER_HANDLES 100
#define LOOP_MIN_CANCELLED_TIMER_HANDLES_FRACTION 0.5
size_t loop_scheduled_len(const loop_t *loop);
size_t loop_timer_cancelled_count(const loop_t *loop);
/* @end accounting */

/* Ask the loop to return from loop_run_forever() at the end of this tick.
 * Called before loop_run_forever(), it makes the next run one tick long.
 * Not thread-safe, as asyncio's stop() is not: from another thread, have
 * the loop's thread call it, with a callback of one line
 *     static void stop_cb(loop_t *loop, void *arg) { (void)arg; loop_stop(loop); }
 * and loop_call_soon_threadsafe(loop, stop_cb, NULL). */
void loop_stop(loop_t *loop);

/* @region threadsafe */
/* The one function of this file that any thread may call, at any time
 * between loop_new() and loop_free(): asyncio's call_soon_threadsafe.  It
 * queues the callback as loop_call_soon() does (FIFO with every other
 * call_soon, so the calls of one thread run in the order it made them),
 * then wakes the loop if it is asleep in its poll, by writing to the
 * loop's self-pipe.  Returns the handle, or NULL with errno set: EINVAL for
 * a NULL callback or a closed loop, ENOMEM.  It does not touch
 * loop_error(), which belongs to the loop's thread.
 *
 * The handle: on the loop's thread, a borrowed pointer as for
 * loop_call_soon() (see "ownership").  On another thread, the loop may have
 * run and released it before this function returns: compare the pointer
 * with NULL, nothing else -- handle_retain() would come too late, and
 * handles are not thread-safe.  Nothing else in this file is thread-safe:
 * to act on the loop from another thread (stop it, schedule a timer, cancel
 * a handle), send a callback that does it on the loop's thread.  To cancel
 * a handle from another thread, the loop's thread retains it and passes it
 * over; the other thread sends a callback that cancels and releases it
 * (asyncio's loop.call_soon_threadsafe(handle.cancel)).
 *
 * Chapter 10, debug mode's thread check (base_events._check_thread): while
 * the loop runs in debug mode (loop_set_debug), loop_call_soon(),
 * loop_call_at() and loop_call_later() called from any thread but the one
 * inside loop_run_forever() are refused: NULL, errno EPERM, and
 * loop_error() says "Non-thread-safe operation invoked on an event loop
 * other than the current one".  Outside debug mode, or while the loop does
 * not run, nothing is checked (as in CPython: the check costs a lookup per
 * call).  The running thread is kept in an atomic, so the check itself is
 * no data race; the message is written by the calling thread, and is for
 * it to read. */
handle_t *loop_call_soon_threadsafe(loop_t *loop, loop_callback callback, void *arg);

/* How another thread wakes the loop.  LOOP_WAKEUP_PIPE (the default, as
 * asyncio): a pipe, one byte per threadsafe call.  LOOP_WAKEUP_EVENTFD
 * (Linux): one fd holding a 64-bit counter instead of two fds and a buffer.
 * coalesce != 0: write only when the loop may be asleep in its poll (libev's
 * ev_async, libuv's uv_async_send); a loop that is running callbacks will
 * look at its ready deque before it sleeps again anyway.  coalesce == 0:
 * a byte per call, from every thread (asyncio's).  Chapter 11: a new loop
 * coalesces the calls of other threads, and writes a byte for each call of
 * its own thread (whose bytes are ticks CPython makes too).  Call it before any
 * other thread may use the loop, and not while it runs; -1 with EBUSY (running),
 * EINVAL (closed, unknown kind), ENOSYS (eventfd off Linux), or the error of
 * pipe()/fcntl()/eventfd(). */
typedef enum loop_wakeup { LOOP_WAKEUP_PIPE, LOOP_WAKEUP_EVENTFD } loop_wakeup;
int loop_set_wakeup(loop_t *loop, loop_wakeup how, int coalesce);

/* How many times the loop has written to its self-pipe so far (a statistic,
 * for the tests and the benchmark; any thread may read it). */
unsigned long loop_wakeup_writes(loop_t *loop);
/* @end threadsafe */

/* For tests only: a seam in the window that coalescing must close.  The
 * look hook is called on the loop's thread each time the loop has read the
 * length of its ready deque, just after it released the lock, with that
 * length.  The first such read of a tick is the look that decides whether
 * the poll may sleep (the others: the snapshot of the callbacks to run).
 * check_threadsafe's hook has another thread call
 * loop_call_soon_threadsafe() right there: a loop that raised `polling`
 * after its look would sleep through that call.  NULL removes the hook. */
typedef void (*loop_look_hook)(loop_t *loop, size_t queued, void *ctx);
void loop_set_look_hook(loop_t *loop, loop_look_hook hook, void *ctx);

/* @region close */
/* Close the loop: it forgets every watched fd (it never closes them: they
 * belong to the caller; its own self-pipe stays open until loop_free()), drops the callbacks still in the ready deque and
 * the timer heap without calling them (releasing every handle), removes
 * its signal handlers (restoring each signal's default), and refuses all
 * further calls with "Event loop is closed".  Chapter 10, as CPython's
 * close(): the default executor is shut down WITHOUT waiting (its queued
 * jobs still run; their results, arriving at a closed loop, are dropped),
 * and loop_run_in_executor() with the default executor says "Executor
 * shutdown has been called" from now on.  Refused while running: -1,
 * EBUSY, "Cannot close a running event loop".  Closing twice does nothing
 * (0), as in asyncio. */
int loop_close(loop_t *loop);
/* @end close */

/* Free the loop's memory, handles included, and close its self-pipe.  Call
 * it after loop_close(), once no other thread can call
 * loop_call_soon_threadsafe() or loop_run_coroutine_threadsafe() any more
 * (join them first); NULL is ignored.
 * Refused from inside a callback of the running loop, which would go on
 * using the freed memory: then it frees nothing, sets errno to EBUSY and
 * says so in loop_error().  Free the loop after loop_run_forever() returns.
 * Chapter 09: what Python's garbage collector does when a program ends,
 * loop_free() does for the loop's futures: each task still pending is
 * reported to the exception handler ("Task was destroyed but it is
 * pending!"), the cycles that keep such tasks alive (a task waits for a
 * future whose callback holds the task) are broken and freed, and a
 * future or task the program still holds is detached: it may still be
 * read and released, and nothing it does reaches the freed loop.
 * Chapter 10: the threads the loop itself set going are its own business.
 * loop_free() waits for the default executor the loop made (every job
 * queued in it runs to its end: CPython joins the pool's threads at exit)
 * and frees it, and joins shutdown_default_executor's thread.  A job of an
 * executor of yours may still be running: loop_free() does not wait for
 * it, but cuts its way home (bridge.c's chains), so its result is dropped
 * and no thread touches the freed loop; free that executor after the loop.
 * A cfuture from loop_run_coroutine_threadsafe() whose task could not
 * finish is cancelled by then, so no thread waits on it forever. */
void loop_free(loop_t *loop);

/* The last error, as a sentence ("" if none yet). */
const char *loop_error(const loop_t *loop);

#endif
