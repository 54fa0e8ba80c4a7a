/* loop.h -- chapter 01: a bare select() loop.
 *
 * The whole interface of this stage: make a loop, tell it which file
 * descriptors to watch and what to call when one is ready, run it until
 * somebody calls loop_stop(), close it.  Names follow asyncio's
 * BaseEventLoop so that the articles map onto this file without a table.
 *
 * Errors: every function that can fail returns -1 (or NULL), sets errno,
 * and leaves a sentence a person can act on in loop_error(loop).
 */
#ifndef LOOP_H
#define LOOP_H

typedef struct loop loop_t;

/* Every callback in this book has this one shape: the loop that runs it and
 * the pointer that was given when it was registered. */
typedef void (*loop_callback)(loop_t *loop, void *arg);

/* A new loop, or NULL with errno set (ENOMEM). */
loop_t *loop_new(void);

/* Watch fd for reading (writing); call callback(loop, arg) each time select()
 * says it is ready, until it is removed.  Adding a reader to an fd that has
 * one replaces it, as asyncio's add_reader does.  Refused with -1 and errno
 * EBADF for a negative fd; EINVAL for an fd >= FD_SETSIZE (select() cannot
 * watch it, and FD_SET with such an fd writes past the end of the fd_set)
 * and for a NULL callback.  A refused call changes nothing. */
int loop_add_reader(loop_t *loop, int fd, loop_callback callback, void *arg);
int loop_add_writer(loop_t *loop, int fd, loop_callback callback, void *arg);

/* Stop watching fd.  Returns 1 if a reader (writer) was removed, 0 if there
 * was none, -1 if refused: errno EBADF for a negative fd, EINVAL for an fd
 * out of range or a closed loop.  Safe from inside any callback,
 * including the fd's own. */
int loop_remove_reader(loop_t *loop, int fd);
int loop_remove_writer(loop_t *loop, int fd);

/* Run ticks until loop_stop() is called.  Returns 0 after a stop, -1 if
 * select() failed (not for EINTR: a signal only ends the current wait). */
int loop_run_forever(loop_t *loop);

/* Ask the loop to return from loop_run_forever() at the end of this tick.
 * Called before loop_run_forever(), it makes the next run one tick long. */
void loop_stop(loop_t *loop);

/* Close the loop: it forgets every watched fd (it never closes them: they
 * belong to the caller) and refuses all further calls with "loop is closed".
 * Refused while running. */
int loop_close(loop_t *loop);

/* Free the loop's memory.  Call it after loop_close(); NULL is ignored.
 * Refused from inside a callback of the running loop, which would go on
 * using the freed memory: then it frees nothing, sets errno to EBUSY and
 * says so in loop_error().  Free the loop after loop_run_forever() returns. */
void loop_free(loop_t *loop);

/* The last error, as a sentence ("" if none yet). */
const char *loop_error(const loop_t *loop);

#endif
