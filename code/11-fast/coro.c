/* coro.c -- chapter 09: the few functions behind coro.h's macros.  The
 * coroutine itself is the caller's step function; what drives it is the
 * task (task.c: task_drive). */
#define _POSIX_C_SOURCE 200809L
#include "coro.h"
#include "future.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* @region coro_init */
/* Chapter 11: each field set, and of the error buffer (192 bytes, read
 * only when c->failed says it holds an error) only its two strings
 * emptied, instead of a memset of the whole frame: a coroutine is made for
 * every task and every await of a sleep. */
coro_t *coro_init(coro_t *c, coro_step_fn step, const char *name, void (*release)(coro_t *))
{
    c->step = step;
    c->state = 0;
    c->name = name;
    c->task = NULL;
    c->awaiting = NULL;
    c->inner = NULL;
    c->value = NULL;
    c->failed = 0;
    c->error.type[0] = '\0';
    c->error.message[0] = '\0';
    c->release = release;
    return c;
}
/* @end coro_init */

/* Future.__await__'s last line, `return self.result()`: run at the resume
 * point of CORO_TRY_AWAIT.  The task sent nothing in (c->failed == 0):
 * take the future's result, or its error (its exception, or the
 * CancelledError of a cancelled future).  An error the task threw in
 * (c->failed == 1) stays, whatever the future holds: it is raised at the
 * await, as coro.throw(exc) raises exc at the `yield`. */
void coro_resume_from(coro_t *c, future_t *awaited)
{
    c->awaiting = NULL;
    if (c->failed || awaited == NULL)
        return;
    if (future_result(awaited, &c->value, &c->error) < 0)
        c->failed = 1;
}

coro_status coro_raise(coro_t *c, const char *type, const char *fmt, ...)
{
    snprintf(c->error.type, sizeof c->error.type, "%s", type != NULL ? type : "RuntimeError");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error.message, sizeof c->error.message, fmt, ap);
    va_end(ap);
    c->failed = 1;
    c->state = -1;
    return CORO_RAISED;
}

void coro_clear_error(coro_t *c)
{
    c->failed = 0;
    memset(&c->error, 0, sizeof c->error);
}
