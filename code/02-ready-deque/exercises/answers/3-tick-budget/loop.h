/* @exercise begin */
/* loop.h (exercise 3) -- chapter 02's loop, with a budget per tick.
 * @exercise end
 *
 * The whole interface of this stage: make a loop, tell it which file
 * descriptors to watch and what to call when one is ready, ask it to call
 * something soon, run it until somebody calls loop_stop(), close it.  Names
 * follow asyncio's BaseEventLoop so that the articles map onto this file
 * without a table.
 *
 * Errors: every function that can fail returns -1 (or NULL), sets errno,
 * and leaves a sentence a person can act on in loop_error(loop).
 */
#ifndef LOOP_H
#define LOOP_H

/* @exercise begin */
#include <stddef.h>

/* @exercise end */
typedef struct loop loop_t;

/* Every callback in this book has this one shape: the loop that runs it and
 * the pointer that was given when it was registered. */
typedef void (*loop_callback)(loop_t *loop, void *arg);

/* @region handle */
/* A handle is one call the loop will make: a callback and its arg, as
 * asyncio's Handle.  Its fields are private to loop.c. */
typedef struct handle handle_t;
/* @end handle */

/* A new loop, or NULL with errno set (ENOMEM). */
loop_t *loop_new(void);

/* Watch fd for reading (writing); call callback(loop, arg) each time select()
 * says it is ready, until it is removed: the watch's handle is appended to
 * the ready deque and runs in turn with the other ready callbacks.  Adding a
 * reader to an fd that has one replaces it, as asyncio's add_reader does.
 * Refused with -1 and errno EBADF for a negative fd; EINVAL for an fd >=
 * FD_SETSIZE (select() cannot watch it, and FD_SET with such an fd writes
 * past the end of the fd_set) and for a NULL callback; ENOMEM.  A refused
 * call changes nothing. */
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
 * thread (chapter 06).  Returns the handle, or NULL with errno set: EINVAL
 * for a NULL callback or a closed loop, ENOMEM.
 *
 * Who owns the handle: the loop.  The caller may keep the pointer until the
 * callback has returned; then the loop frees it (loop_close() frees a handle
 * whose callback never ran).  No function takes a handle yet: chapter 05
 * adds handle_cancel(), and with it reference counting. */
handle_t *loop_call_soon(loop_t *loop, loop_callback callback, void *arg);
/* @end call_soon */

/* @exercise begin */
/* @region budget */
/* Exercise 3: let each tick pop at most max_callbacks handles from the
 * ready deque; the others stay queued, in order, for the next tick, which
 * then polls without blocking.  0 (the default) means no limit: the whole
 * deque, as in the rest of this chapter.  -1 ("loop is closed") on a
 * closed loop. */
int loop_set_tick_budget(loop_t *loop, size_t max_callbacks);
/* @end budget */

/* @exercise end */
/* Run ticks until loop_stop() is called.  Returns 0 after a stop, -1 if
 * select() failed (not for EINTR: a signal only ends the current wait).
 *
 * Out of memory while a tick queues the handles of ready fds, it returns
 * -1 with ENOMEM before that tick runs any callback, and loses nothing: an
 * fd that could not be queued is still ready, and is reported again, and a
 * later loop_run_forever() runs everything that was queued, once, in the
 * order an uninterrupted run would have.  (Every call that allocates is
 * the same: refused with ENOMEM, it changes nothing.) */
int loop_run_forever(loop_t *loop);

/* Ask the loop to return from loop_run_forever() at the end of this tick.
 * Called before loop_run_forever(), it makes the next run one tick long. */
void loop_stop(loop_t *loop);

/* Close the loop: it forgets every watched fd (it never closes them: they
 * belong to the caller), drops the callbacks still in the ready deque without
 * calling them, and refuses all further calls with "loop is closed".
 * Refused while running. */
int loop_close(loop_t *loop);

/* Free the loop's memory, handles included.  Call it after loop_close();
 * NULL is ignored.  Refused from inside a callback of the running loop,
 * which would go on using the freed memory: then it frees nothing, sets
 * errno to EBUSY and says so in loop_error().  Free the loop after
 * loop_run_forever() returns. */
void loop_free(loop_t *loop);

/* The last error, as a sentence ("" if none yet). */
const char *loop_error(const loop_t *loop);

#endif
