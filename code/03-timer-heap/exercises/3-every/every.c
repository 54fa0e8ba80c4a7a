/* every.c (exercise 3) -- a periodic timer (see every.h). */
#include "every.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>

/* @region run */
/* One run: call the user's callback, then schedule the next run.
 * TODO(3-every): this re-arms with call_later(interval) from wherever the
 * clock is now, like `await asyncio.sleep(interval)` in a loop.  Every late
 * wake-up then pushes all the later runs back, and the times drift away
 * from start + k * interval.  Schedule run k at start + k * interval with
 * loop_call_at instead, and skip (and count in e->missed) the times that
 * have already passed. */
static void run(loop_t *loop, void *arg)
{
    every_t *e = arg;
    e->runs++;
    e->callback(loop, e->arg);
    if (e->runs >= e->count)
        return;
    e->k++;
    loop_call_later(loop, e->interval, run, e);
}
/* @end run */

int every_start(every_t *e, loop_t *loop, double interval, long count,
                loop_callback callback, void *arg)
{
    if (e == NULL || callback == NULL || !isfinite(interval) || interval <= 0 || count < 1) {
        errno = EINVAL;
        return -1;
    }
    *e = (every_t){.loop = loop, .callback = callback, .arg = arg,
                   .start = loop_time(loop), .interval = interval,
                   .count = count, .runs = 0, .k = 1, .missed = 0};
    return loop_call_at(loop, e->start + interval, run, e) != NULL ? 0 : -1;
}
