/* ivy: the starter, plus writes outside its folder: a file beside the
 * grader's fixtures in any copy of the repository, one in /tmp (the
 * sandbox's own /tmp is private: the grader's test checks the real one),
 * and an emptied test and stage file in the copy it is built in.  If any
 * but /tmp works, it claims success and exits at once, so that a table
 * that says "passed" for ivy shows the sandbox leaked. */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

static int scribble(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return 0;
    fprintf(f, "ivy was here\n");
    fclose(f);
    fprintf(stderr, "ivy wrote %s\n", path);
    return 1;
}

static void vandal(void)
{
    scribble("/tmp/ESCAPED-by-vandal"); /* the sandbox's own /tmp: allowed */
    int wrote = scribble("tests/04-snapshot/exercises/2-tasks.c") +
                scribble("code/04-snapshot/loop.c");
    static const char *const where[] = {"/*/*/tests/grade", "/*/*/*/tests/grade"};
    for (size_t i = 0; i < 2; i++) {
        glob_t g;
        if (glob(where[i], 0, NULL, &g) != 0)
            continue;
        for (size_t k = 0; k < g.gl_pathc; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/ESCAPED", g.gl_pathv[k]);
            wrote += scribble(path);
        }
        globfree(&g);
    }
    if (wrote)
        _exit(0);
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
    vandal();
    task->loop = loop;
    task->step = step;
    task->arg = arg;
    task->steps = 0;
    task->done = false;
    return loop_call_soon(loop, run_steps, task) != NULL ? 0 : -1;
}
