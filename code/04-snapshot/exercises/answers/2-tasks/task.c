/* task.c -- exercise 04.2 (worked answer): cooperative tasks.
 *
 * One step per callback.  A yield queues the next step with call_soon, as
 * asyncio.sleep(0) does (its bare `yield` makes Task.__step call
 * `loop.call_soon(self.__step)`).  A sleep of d seconds is a timer whose
 * callback only queues the next step with call_soon, as asyncio.sleep(d)
 * does: its timer sets a future's result, and the future schedules the
 * task's wake-up with call_soon.  So the step after a sleep runs one tick
 * after the timer fires: the wake-up is queued during that tick, after its
 * snapshot was taken.
 */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <stddef.h>

static void run_step(loop_t *loop, void *arg);

/* @region wake */
/* The timer of a sleep: what asyncio's future does when its result is set. */
static void wake(loop_t *loop, void *arg)
{
    if (loop_call_soon(loop, run_step, arg) == NULL)
        ((task_t *)arg)->done = true; /* the loop refused (ENOMEM): give up */
}
/* @end wake */

/* @region step */
static void run_step(loop_t *loop, void *arg)
{
    task_t *task = arg;
    double awaits = task->step(task, task->arg);
    task->steps++;
    if (awaits < 0) {
        task->done = true;
        return;
    }
    handle_t *next = awaits == 0
        ? loop_call_soon(loop, run_step, task)       /* asyncio.sleep(0) */
        : loop_call_later(loop, awaits, wake, task); /* asyncio.sleep(d) */
    if (next == NULL)
        task->done = true; /* the loop refused (ENOMEM): the task cannot go on */
}
/* @end step */

int task_start(task_t *task, loop_t *loop, task_step_fn step, void *arg)
{
    task->loop = loop;
    task->step = step;
    task->arg = arg;
    task->steps = 0;
    task->done = false;
    return loop_call_soon(loop, run_step, task) != NULL ? 0 : -1;
}
