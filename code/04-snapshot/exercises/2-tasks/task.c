/* task.c -- exercise 04.2 (starter): cooperative tasks.
 *
 * As given, a task never yields: its first callback runs every step in a
 * row, like a coroutine that never awaits, and it ignores the sleeps.
 * TODO(2-tasks): run ONE step per callback; after a step that returns 0,
 * queue the next step the way asyncio.sleep(0) does; after a step that
 * returns d > 0, resume the task the way asyncio.sleep(d) does.
 */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <stddef.h>

static void run_steps(loop_t *loop, void *arg)
{
    (void)loop;
    task_t *task = arg;
    while (!task->done) {
        double awaits = task->step(task, task->arg);
        task->steps++;
        if (awaits < 0)
            task->done = true;
        /* TODO(2-tasks): a yield (0) or a sleep (> 0) should end this
         * callback and resume the task later. */
    }
}

int task_start(task_t *task, loop_t *loop, task_step_fn step, void *arg)
{
    task->loop = loop;
    task->step = step;
    task->arg = arg;
    task->steps = 0;
    task->done = false;
    return loop_call_soon(loop, run_steps, task) != NULL ? 0 : -1;
}
