/* eve: a sleep's wake-up record is freed before its timer fires, and read
 * after: a use after free, which the plain build does not notice. */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct wakeup {
    task_t *task;
} wakeup_t;

static void run_step(loop_t *loop, void *arg);

static void wake(loop_t *loop, void *arg)
{
    wakeup_t *w = arg;
    if (loop_call_soon(loop, run_step, w->task) == NULL) /* w was freed */
        w->task->done = true;
}

static void run_step(loop_t *loop, void *arg)
{
    task_t *task = arg;
    double awaits = task->step(task, task->arg);
    task->steps++;
    if (awaits < 0) {
        task->done = true;
        return;
    }
    if (awaits == 0) {
        if (loop_call_soon(loop, run_step, task) == NULL)
            task->done = true;
        return;
    }
    wakeup_t *w = malloc(sizeof *w);
    if (w == NULL || loop_call_later(loop, awaits, wake, w) == NULL)
        task->done = true;
    else
        w->task = task;
    free(w); /* too early: wake() reads it */
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
