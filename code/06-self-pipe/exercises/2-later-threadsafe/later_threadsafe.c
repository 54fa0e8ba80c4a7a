/* later_threadsafe.c -- exercise 2 of chapter 06 (starter). */
#define _POSIX_C_SOURCE 200809L
#include "later_threadsafe.h"

#include <errno.h>

int loop_call_later_threadsafe(loop_t *loop, double delay, loop_callback callback, void *arg)
{
    /* TODO(2-later-threadsafe): loop_call_later() may only be called on the
     * loop's thread.  Send it there: pack the request (delay, callback,
     * arg) into memory of its own, and hand the loop a callback that
     * schedules it and frees the request. */
    (void)loop;
    (void)delay;
    (void)callback;
    (void)arg;
    errno = ENOSYS;
    return -1;
}
