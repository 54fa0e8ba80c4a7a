/* demo_timers.c -- timers run in deadline order; equal deadlines do not.
 *
 *     demo_timers          on the virtual clock: exact times
 *     demo_timers --real   on the real clock: the order, and whether every
 *                          timer with a deadline ahead ran within
 *                          TOLERANCE after it
 *
 * Everything is scheduled before the loop runs, from one base time t0, so
 * both runs make the same heap operations and print the same order:
 *   - call_later(-1, a) then call_later(-2, b): both are due at once, and
 *     b, the earlier deadline, runs first;
 *   - three timers at t0 + 0.3, 0.1, 0.2 run as 0.1, 0.2, 0.3;
 *   - eight timers at the same t0 + 0.25, scheduled tie0 .. tie7, run in
 *     the order CPython's heapq pops them, which is not tie0 .. tie7.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 0.100 /* seconds late that still count as on time (real clock);
                          * generous: a loaded CI machine or valgrind is slow,
                          * and the point is the order and "never early" */

typedef struct timer {
    const char *name;
    bool later;   /* call_later(delay) rather than call_at(t0 + offset) */
    double t;     /* the delay, or the offset from t0 */
    double when;  /* the deadline, once scheduled */
} timer_t_;

/* @region plan */
static timer_t_ plan[] = {
    {"a", true, -1, 0},       {"b", true, -2, 0},
    {"late", false, 0.3, 0},  {"early", false, 0.1, 0}, {"mid", false, 0.2, 0},
    {"tie0", false, 0.25, 0}, {"tie1", false, 0.25, 0}, {"tie2", false, 0.25, 0},
    {"tie3", false, 0.25, 0}, {"tie4", false, 0.25, 0}, {"tie5", false, 0.25, 0},
    {"tie6", false, 0.25, 0}, {"tie7", false, 0.25, 0},
};
/* @end plan */
#define NPLAN (sizeof plan / sizeof plan[0])

static bool real;
static double t0;
static size_t ran;
static bool on_time = true;

static void die(loop_t *loop, const char *what)
{
    fprintf(stderr, "demo_timers: %s: %s\n", what, loop_error(loop));
    exit(1);
}

/* @region fire */
static void fire(loop_t *loop, void *arg)
{
    timer_t_ *timer = arg;
    double now = loop_time(loop);
    if (real) {
        /* Only a deadline in the future is one to meet: a timer due when it
         * was scheduled (a, b) runs whenever the first tick gets to it. */
        printf("%s\n", timer->name);
        if (timer->when > t0 && (now < timer->when || now > timer->when + TOLERANCE))
            on_time = false;
    } else {
        printf("%.6f  %-5s (due %+.6f)\n", now - t0, timer->name, timer->when - t0);
    }
    if (++ran == NPLAN)
        loop_stop(loop);
}
/* @end fire */

int main(int argc, char **argv)
{
    real = argc == 2 && strcmp(argv[1], "--real") == 0;
    if (argc > 2 || (argc == 2 && !real)) {
        fprintf(stderr, "usage: demo_timers [--real]\n");
        return 2;
    }
    loop_t *loop = real ? loop_new() : loop_new_virtual();
    if (loop == NULL) {
        perror("loop_new");
        return 1;
    }
    /* @region schedule */
    t0 = loop_time(loop);
    for (size_t i = 0; i < NPLAN; i++) {
        timer_t_ *timer = &plan[i];
        handle_t *h;
        if (timer->later) {
            timer->when = loop_time(loop) + timer->t;
            h = loop_call_later(loop, timer->t, fire, timer);
        } else {
            timer->when = t0 + timer->t;
            h = loop_call_at(loop, timer->when, fire, timer);
        }
        if (h == NULL)
            die(loop, "schedule");
    }
    /* @end schedule */
    /* Refused: a delay that is not a number. */
    if (loop_call_later(loop, NAN, fire, NULL) == NULL)
        printf("call_later(NaN): %s\n", loop_error(loop));
    if (loop_run_forever(loop) < 0)
        die(loop, "run_forever");
    if (real)
        printf("timing within %.0f ms: %s\n", TOLERANCE * 1e3, on_time ? "yes" : "no");
    else
        printf("virtual time at the end: %.6f\n", loop_time(loop) - t0);
    loop_close(loop);
    loop_free(loop);
    return 0;
}
