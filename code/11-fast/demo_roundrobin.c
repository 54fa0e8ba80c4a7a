/* demo_roundrobin.c -- chapter 09: article 004's exercise 1 (题目1), the
 * TinyEventLoop, reduced to its core: coroutines that take turns.
 *
 * Each coroutine counts its steps and yields after each but the last, as
 * 题目1's my_coro yields between its prints.  B starts a coroutine of its
 * own (D) in its first step, and E fails in its second.  The scheduler is
 * roundrobin.c; there is no loop, no clock and no future here: a yield
 * means "let the others run", and the order of the lines is the order of
 * the queue.
 */
#include "roundrobin.h"

#include <stdio.h>

/* A coroutine's frame: everything that must live across a yield. */
typedef struct counter {
    coro_t coro;      /* first: a counter_t * is a coro_t * */
    rr_t *rr;         /* the scheduler, to print the turn and to spawn */
    int steps;        /* how many steps it takes */
    int i;            /* the loop variable: a local would not survive a yield */
    int fail_at;      /* 0, or the step at which it raises */
    struct counter *child; /* a coroutine to spawn in step 1, or NULL */
} counter_t;

/* @region counter */
static coro_status counter_step(coro_t *c)
{
    counter_t *k = (counter_t *)c;
    CORO_BEGIN(c);
    for (k->i = 1; k->i <= k->steps; k->i++) {
        printf("turn %lu: %s step %d of %d\n", k->rr->steps + 1, c->name, k->i, k->steps);
        if (k->i == 1 && k->child != NULL) {
            printf("        %s spawns %s\n", c->name, k->child->coro.name);
            rr_spawn(k->rr, &k->child->coro);
        }
        if (k->i == k->fail_at)
            CORO_RAISE(c, "ValueError", "%s gives up at step %d", c->name, k->i);
        if (k->i < k->steps)
            CORO_YIELD(c); /* await asyncio.sleep(0) */
    }
    printf("        %s returns\n", c->name);
    CORO_END(c);
}
/* @end counter */

int main(void)
{
    rr_t rr;
    rr_init(&rr);
    /* @region main */
    counter_t d = {.rr = &rr, .steps = 2};
    counter_t coros[] = {
        {.rr = &rr, .steps = 3},
        {.rr = &rr, .steps = 2, .child = &d},
        {.rr = &rr, .steps = 1},
        {.rr = &rr, .steps = 3, .fail_at = 2},
    };
    const char *names[] = {"A", "B", "C", "E"};
    coro_init(&d.coro, counter_step, "D", NULL);
    for (int i = 0; i < 4; i++)
        rr_spawn(&rr, coro_init(&coros[i].coro, counter_step, names[i], NULL));
    int rc = rr_run(&rr);
    printf("rr_run: %d after %lu steps; %u returned, %u failed (%s: %s)\n", rc, rr.steps,
           rr.returned, rr.failed, rr.error.type, rr.error.message);
    /* @end main */
    return 0;
}
