/* every.c (exercise 3) -- a periodic timer (see every.h). */
#include "every.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>

/* @region run */
/* A CHEAT for exercise 03.3 (tests/grade/README.md): the next deadline is
 * the last one plus interval, kept in e->start (which every.h says stays
 * the start), not start + k * interval.  Late wake-ups do not add up, but
 * the rounding of every addition does. */
static void run(loop_t *loop, void *arg)
{
    every_t *e = arg;
    e->runs++;
    e->callback(loop, e->arg);
    if (e->runs >= e->count)
        return;
    double now = loop_time(loop);
    e->start += e->interval; /* now the time of the run just made */
    e->k++;
    while (e->start + e->interval <= now) { /* skip what has passed */
        e->start += e->interval;
        e->k++;
        e->missed++;
    }
    loop_call_at(loop, e->start + e->interval, run, e);
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
