/* demo_states.c -- chapter 08: a loop's life, state by state, and every
 * refusal in CPython's words.
 *
 * Article 004 draws the loop as a state machine (2.1: NEW, RUNNING,
 * STOPPING, CLOSED), creates, runs and closes one by hand (6.1-6.3), and
 * lists the errors people meet (9.1 "Event loop is closed", 9.3 "Cannot
 * run the event loop while another loop is running").  This program walks
 * one loop through all of it and prints what each call did.  Virtual
 * clock: the output is the same on every run.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static loop_t *other; /* a second loop, for 9.3 */

static void state(loop_t *loop, const char *when)
{
    printf("%-44s state %-8s is_running %d  is_closed %d\n", when,
           loop_state_name(loop_get_state(loop)), loop_is_running(loop), loop_is_closed(loop));
}

/* Print what a call returned: "ok", or the refusal and its errno. */
static void said(loop_t *loop, const char *what, int rc)
{
    if (rc == 0)
        printf("  %-42s -> ok\n", what);
    else
        printf("  %-42s -> refused (%s): %s\n", what, errno == EBUSY ? "EBUSY" :
               errno == EINVAL ? "EINVAL" : strerror(errno), loop_error(loop));
}

/* @region inside */
static void inside(loop_t *loop, void *arg)
{
    (void)arg;
    state(loop, "in a callback");
    said(loop, "loop_run_forever(loop)", loop_run_forever(loop));
    said(other, "loop_run_forever(other)", loop_run_forever(other));
    said(loop, "loop_close(loop)", loop_close(loop));
    loop_stop(loop);
    state(loop, "after loop_stop(), same callback");
}
/* @end inside */

static void later(loop_t *loop, void *arg)
{
    (void)arg;
    state(loop, "in a callback of the second run");
    loop_stop(loop);
}

int main(void)
{
    /* @region walk */
    loop_t *loop = loop_new_virtual();
    other = loop_new_virtual();
    state(loop, "loop_new_virtual()");
    loop_call_soon(loop, inside, NULL);
    said(loop, "loop_run_forever(loop), from main", loop_run_forever(loop));
    state(loop, "after loop_run_forever() returned");
    loop_call_later(loop, 1, later, NULL); /* stopped is not closed: run it again */
    said(loop, "loop_run_forever(loop), again", loop_run_forever(loop));
    said(loop, "loop_close(loop)", loop_close(loop));
    state(loop, "after loop_close()");
    said(loop, "loop_close(loop), twice", loop_close(loop));
    said(loop, "loop_run_forever(loop)", loop_run_forever(loop));
    said(loop, "loop_call_soon(loop, ...)", loop_call_soon(loop, later, NULL) ? 0 : -1);
    said(loop, "loop_call_later(loop, 1, ...)", loop_call_later(loop, 1, later, NULL) ? 0 : -1);
    said(loop, "loop_add_reader(loop, 0, ...)", loop_add_reader(loop, 0, later, NULL));
    loop_free(loop);
    loop_close(other);
    loop_free(other);
    /* @end walk */
    return 0;
}
