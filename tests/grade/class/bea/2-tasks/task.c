/* bea: one step per callback, but a sleep resumes the task straight from
 * its timer, a tick too early (the test says why). */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <stddef.h>

static void run_step(loop_t *loop, void *arg)
{
    task_t *task = arg;
    double awaits = task->step(task, task->arg);
    task->steps++;
    if (awaits < 0) {
        task->done = true;
        return;
    }
    handle_t *next = awaits == 0 ? loop_call_soon(loop, run_step, task)
                                 : loop_call_later(loop, awaits, run_step, task);
    if (next == NULL)
        task->done = true;
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
