/* later_threadsafe.c -- exercise 2 of chapter 06 (a worked answer). */
#define _POSIX_C_SOURCE 200809L
#include "later_threadsafe.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* The request travels from the calling thread to the loop's thread inside
 * the handle's arg: written before loop_call_soon_threadsafe() (whose lock
 * publishes it), read and freed on the loop's thread. */
typedef struct later_request {
    double delay;
    loop_callback callback;
    void *arg;
} later_request_t;

/* Runs on the loop's thread: now loop_call_later() is allowed. */
static void schedule(loop_t *loop, void *arg)
{
    later_request_t *req = arg;
    loop_call_later(loop, req->delay, req->callback, req->arg);
    free(req);
}

int loop_call_later_threadsafe(loop_t *loop, double delay, loop_callback callback, void *arg)
{
    if (callback == NULL || !isfinite(delay)) {
        errno = EINVAL;
        return -1;
    }
    later_request_t *req = malloc(sizeof *req);
    if (req == NULL) {
        errno = ENOMEM;
        return -1;
    }
    *req = (later_request_t){delay, callback, arg};
    if (loop_call_soon_threadsafe(loop, schedule, req) == NULL) {
        free(req); /* refused: nobody else will */
        return -1;
    }
    return 0;
}
