/* cal: a missing semicolon. */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <stddef.h>

static void run_step(loop_t *loop, void *arg)
{
    task_t *task = arg;
    double awaits = task->step(task, task->arg)
    task->steps++;
    if (awaits < 0)
        task->done = true;
    else
        loop_call_soon(loop, run_step, task);
}

int task_start(task_t *task, loop_t *loop, task_step_fn step, void *arg)
{
    task->loop = loop;
    task->step = step;
    task->arg = arg;
    task->steps = 0;
    task->done = false;
    return loop_call_soon(loop, run_step, task) != NULL ? 0 : -1;
}
