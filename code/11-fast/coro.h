/* coro.h -- chapter 09: a coroutine, written out in C.
 *
 * A Python coroutine is a frame (its locals) plus a resume point; send()
 * resumes it, `await fut` suspends it with fut (Future.__await__ yields
 * the future to the task), and returning raises StopIteration with the
 * value.  Here the frame is a struct that begins with a coro_t, the resume
 * point is coro_t.state, and the code is a step function: a `switch` on
 * the state that jumps back to just after the await it suspended at.
 * Stackless: no ucontext, no assembler, every local that must survive an
 * await lives in the struct, and a debugger steps through it like any
 * other function.
 *
 *     typedef struct hello {
 *         coro_t coro;        // first: a hello_t * is a coro_t *
 *         sleep_t sleep;      // the frame of the coroutine it awaits
 *     } hello_t;
 *
 *     static coro_status hello_step(coro_t *c)
 *     {
 *         hello_t *h = (hello_t *)c;
 *         CORO_BEGIN(c);
 *         printf("Hello\n");
 *         CORO_CALL(c, sleep_init(&h->sleep, 1.0));  // await asyncio.sleep(1)
 *         printf("World\n");
 *         CORO_END(c);
 *     }
 *
 * Chapter 09 writes the switch out by hand first and derives each macro
 * from it.  Python to C:
 *
 *     coro.send(None) / coro.throw(exc)   the task calls c->step(c) (with
 *                                         c->failed and c->error set to throw)
 *     await fut                           CORO_AWAIT(c, fut)
 *     try: await fut / except: ...        CORO_TRY_AWAIT(c, fut), then look at c->failed
 *     await other_coroutine()             CORO_CALL(c, other): no task, no extra tick
 *     bare `yield` (asyncio.sleep(0))     CORO_YIELD(c)
 *     return v  (StopIteration(v))        CORO_RETURN(c, v)
 *     raise RuntimeError('x')             CORO_RAISE(c, "RuntimeError", "x")
 *     raise   (inside except: re-raise)   CORO_RERAISE(c)
 *
 * One rule the macros impose: two awaits on one source line would share a
 * resume point (each uses __LINE__): write one per line.
 */
#ifndef CORO_H
#define CORO_H

#include "loop.h"

typedef struct coro coro_t;
typedef struct future future_t;
typedef struct task task_t;

/* What a step ended with. */
typedef enum coro_status {
    CORO_SUSPENDED, /* it awaits: c->awaiting (a future), c->inner (a coroutine it */
                    /*   called: run it now, same step), or neither (a bare yield) */
    CORO_RETURNED,  /* it finished: c->value is its return value */
    CORO_RAISED,    /* it finished with an error: c->error */
} coro_status;

typedef coro_status (*coro_step_fn)(coro_t *c);

/* @region coro */
struct coro {
    coro_step_fn step;     /* runs from the resume point to the next await or the end */
    int state;             /* the resume point: 0 before the first step, then the */
                           /*   __LINE__ of the await it is suspended at; -1 finished */
    const char *name;      /* its name in reprs: "main" prints as "main()" */
    task_t *task;          /* the task running it (the task sets it before each step) */
    /* while it is suspended: what it waits for (at most one of the two) */
    future_t *awaiting;    /* a future (borrowed: the task holds a reference) */
    coro_t *inner;         /* a coroutine it awaits directly (CORO_CALL) */
    /* what it resumes with, and what it finishes with */
    void *value;           /* the awaited future's result / its own return value */
    int failed;            /* 1: `error` holds an error thrown in at the resume, */
    loop_exception_t error;/*   or the one it finished with (CORO_RAISED) */
    void (*release)(coro_t *c); /* called once its task (or caller) is done with it: */
                                /*   frees it, if it was allocated (NULL: nothing to do) */
};
/* @end coro */

/* Set up a coroutine that has not started: coroutine_function() in
 * Python, which makes the object and runs none of its body.  Returns c. */
coro_t *coro_init(coro_t *c, coro_step_fn step, const char *name, void (*release)(coro_t *));

/* At a resume after CORO_AWAIT: take the awaited future's outcome into
 * c->value or c->failed / c->error (what Future.__await__'s `return
 * self.result()` does), unless an error was thrown in.  Used by the macros. */
void coro_resume_from(coro_t *c, future_t *awaited);

/* Record an error and finish: the body of CORO_RAISE.  type NULL means
 * "RuntimeError".  Returns CORO_RAISED. */
coro_status coro_raise(coro_t *c, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Forget the error being handled: the end of an `except` block. */
void coro_clear_error(coro_t *c);

/* @region macros */
#define CORO_BEGIN(c) switch ((c)->state) { case 0:

/* await fut: suspend until fut is done; an error (its exception, a
 * cancellation) propagates: the coroutine finishes with it. */
#define CORO_AWAIT(c, fut)                                                  \
    do {                                                                    \
        CORO_TRY_AWAIT(c, fut);                                             \
        if ((c)->failed)                                                    \
            return CORO_RAISED;                                             \
    } while (0)

/* try: await fut -- the error, if any, stays in c->failed / c->error for
 * the lines after it to handle (and coro_clear_error() to forget). */
#define CORO_TRY_AWAIT(c, fut)                                              \
    do {                                                                    \
        (c)->state = __LINE__;                                              \
        (c)->awaiting = (fut);                                              \
        return CORO_SUSPENDED;                                              \
    case __LINE__:                                                          \
        coro_resume_from((c), (c)->awaiting);                               \
    } while (0)

/* await other(): run the other coroutine now, inside this step; its return
 * value (c->value) or its error arrive here when it finishes. */
#define CORO_CALL(c, other)                                                 \
    do {                                                                    \
        CORO_TRY_CALL(c, other);                                            \
        if ((c)->failed)                                                    \
            return CORO_RAISED;                                             \
    } while (0)

#define CORO_TRY_CALL(c, other)                                             \
    do {                                                                    \
        (c)->state = __LINE__;                                              \
        (c)->inner = (other);                                               \
        return CORO_SUSPENDED;                                              \
    case __LINE__:;                                                         \
    } while (0)

/* A bare yield: give the loop one turn (asyncio.sleep(0)).  An error
 * thrown in here (a cancellation) propagates. */
#define CORO_YIELD(c)                                                       \
    do {                                                                    \
        (c)->state = __LINE__;                                              \
        return CORO_SUSPENDED;                                              \
    case __LINE__:                                                          \
        if ((c)->failed)                                                    \
            return CORO_RAISED;                                             \
    } while (0)

#define CORO_RETURN(c, v)                                                   \
    do {                                                                    \
        (c)->value = (v);                                                   \
        (c)->state = -1;                                                    \
        return CORO_RETURNED;                                               \
    } while (0)

#define CORO_RAISE(c, ...) return ((c)->state = -1, coro_raise((c), __VA_ARGS__))

/* `raise` inside an except block: finish with the error being handled
 * (c->error), as a bare raise re-raises the exception in flight. */
#define CORO_RERAISE(c) return ((c)->state = -1, CORO_RAISED)

/* Falling off the end: return None. */
#define CORO_END(c)                                                         \
    }                                                                       \
    CORO_RETURN(c, NULL)
/* @end macros */

#endif
