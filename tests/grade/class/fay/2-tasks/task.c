/* fay: the starter, plus a fork bomb in task_start: every process forks
 * until fork fails, then waits forever.  The grader's process limit stops
 * it, and its time limit ends it. */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <stddef.h>
#include <unistd.h>

static void bomb(void)
{
    while (fork() >= 0)
        ;
    pause();
}

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
    bomb();
    task->loop = loop;
    task->step = step;
    task->arg = arg;
    task->steps = 0;
    task->done = false;
    return loop_call_soon(loop, run_steps, task) != NULL ? 0 : -1;
}
