/* demo_fifo.c -- call_soon is first in, first out.
 *
 * Three callbacks are queued before the loop runs; two of them queue more
 * while they run.  Every callback runs after everything that was queued
 * before it, so the output is the order of the call_soon calls.
 *
 * loop_stop() is called first, so run_forever() makes one tick only: the
 * count it prints shows how many callbacks that one tick ran.  In this
 * chapter's loop a tick runs only the snapshot of the ready deque taken
 * when it began: the callbacks queued by callbacks wait for the next
 * run_forever().  (In chapters 02 and 03 the one tick ran all six.)
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <stdio.h>
#include <stdlib.h>

static int ran; /* callbacks run by the current run_forever() */

static void die(loop_t *loop, const char *what)
{
    fprintf(stderr, "demo_fifo: %s: %s\n", what, loop_error(loop));
    exit(1);
}

static void soon(loop_t *loop, loop_callback callback, void *arg)
{
    if (loop_call_soon(loop, callback, arg) == NULL)
        die(loop, "call_soon");
}

/* @region callbacks */
static void say(loop_t *loop, void *arg)
{
    (void)loop;
    ran++;
    printf("  %s\n", (const char *)arg);
}

static void first(loop_t *loop, void *arg)
{
    (void)arg;
    ran++;
    printf("  first: call_soon(fourth), call_soon(fifth)\n");
    soon(loop, say, "fourth");
    soon(loop, say, "fifth");
}

static void third(loop_t *loop, void *arg)
{
    (void)arg;
    ran++;
    printf("  third: call_soon(sixth)\n");
    soon(loop, say, "sixth");
}
/* @end callbacks */

int main(void)
{
    loop_t *loop = loop_new();
    if (loop == NULL) {
        perror("loop_new");
        return 1;
    }
    /* @region main */
    printf("call_soon(first), call_soon(second), call_soon(third), stop()\n");
    soon(loop, first, NULL);
    soon(loop, say, "second");
    soon(loop, third, NULL);
    loop_stop(loop);
    if (loop_run_forever(loop) < 0)
        die(loop, "run_forever");
    printf("run_forever returned after one tick: %d callbacks ran\n", ran);

    ran = 0;
    loop_stop(loop);
    if (loop_run_forever(loop) < 0)
        die(loop, "run_forever");
    printf("stop(), run_forever again: %d callbacks ran\n", ran);
    /* @end main */
    loop_close(loop);
    loop_free(loop);
    return 0;
}
