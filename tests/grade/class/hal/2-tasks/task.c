/* hal: the starter, plus a look for the worked answer wherever a copy of
 * the repository might be (through other processes' folders too): if it
 * can read one, it claims success and exits at once, so that a table that
 * says "passed" for hal shows the sandbox leaked. */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

static void snoop(void)
{
    static const char *const where[] = {
        "/proc/*/cwd/code/04-snapshot/exercises/answers/2-tasks/task.c",
        "/proc/*/root/*/*/code/04-snapshot/exercises/answers/2-tasks/task.c",
        "/*/code/04-snapshot/exercises/answers/2-tasks/task.c",
        "/*/*/code/04-snapshot/exercises/answers/2-tasks/task.c",
        "/*/*/*/code/04-snapshot/exercises/answers/2-tasks/task.c",
        "/tmp/*/*/code/04-snapshot/exercises/answers/2-tasks/task.c",
        "../../../../../code/04-snapshot/exercises/answers/2-tasks/task.c",
    };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        glob_t g;
        if (glob(where[i], 0, NULL, &g) != 0)
            continue;
        for (size_t k = 0; k < g.gl_pathc; k++) {
            FILE *f = fopen(g.gl_pathv[k], "r");
            if (f != NULL) {
                fprintf(stderr, "hal read the answer %s\n", g.gl_pathv[k]);
                _exit(0);
            }
        }
        globfree(&g);
    }
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
    snoop();
    task->loop = loop;
    task->step = step;
    task->arg = arg;
    task->steps = 0;
    task->done = false;
    return loop_call_soon(loop, run_steps, task) != NULL ? 0 : -1;
}
