/* later_threadsafe.h -- exercise 2 of chapter 06: call_later from any thread. */
#ifndef LATER_THREADSAFE_H
#define LATER_THREADSAFE_H

#include "loop.h"

/* Arrange, from any thread, for callback(loop, arg) to be called once,
 * `delay` seconds after the loop's thread has received the request (the
 * asyncio idiom loop.call_soon_threadsafe(loop.call_later, delay, cb)).
 * Returns 0, or -1 with errno set: EINVAL for a NULL callback, a NaN or
 * infinite delay (refused here, on the calling thread: nobody could be told
 * later), or a closed loop; ENOMEM.  No handle: it does not exist yet when
 * this function returns. */
int loop_call_later_threadsafe(loop_t *loop, double delay, loop_callback callback, void *arg);

#endif
