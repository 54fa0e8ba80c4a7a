/* every.c (exercise 3, answer) -- a periodic timer (see every.h). */
#include "every.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>

/* When run k is due: always computed from k, never by adding. */
static double due(const every_t *e, long k)
{
    return e->start + (double)k * e->interval;
}

/* @region run */
/* One run: call the user's callback, then schedule the next run at
 * start + k * interval, for the first k whose time is still ahead. */
static void run(loop_t *loop, void *arg)
{
    every_t *e = arg;
    e->runs++;
    e->callback(loop, e->arg);
    if (e->runs >= e->count) /* done, or the callback lowered count */
        return;
    double now = loop_time(loop);
    long next = e->k + 1;
    if (due(e, next) <= now) {
        /* Late by an interval or more: jump to the first time after now.
         * The division may round either way; the two loops fix that. */
        double k = floor((now - e->start) / e->interval) + 1;
        next = k < (double)(LONG_MAX / 2) ? (long)k : LONG_MAX / 2;
        while (due(e, next) <= now)
            next++;
        while (due(e, next - 1) > now)
            next--;
        e->missed += next - (e->k + 1);
    }
    e->k = next;
    if (loop_call_at(loop, due(e, next), run, e) == NULL)
        e->count = e->runs; /* the loop refused (closed, out of memory): stop */
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
    return loop_call_at(loop, due(e, 1), run, e) != NULL ? 0 : -1;
}
