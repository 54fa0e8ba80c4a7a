/* repr.c -- chapter 09: futures as Python's repr() prints them
 * (base_futures._future_repr_info), for the exception handler's messages
 * and for a reader's debugger.  Task's own repr is in task.c: it adds the
 * name, the coroutine and what the task waits for to what this file
 * writes.
 */
#define _POSIX_C_SOURCE 200809L
#include "future_private.h"

#include <stdio.h>
#include <string.h>

/* @region repr */
void str_repr(const char *s, char *buf, size_t size)
{
    char q = strchr(s, '\'') != NULL && strchr(s, '"') == NULL ? '"' : '\'';
    size_t len = 0;
    if (size == 0)
        return;
#define PUT(ch) do { if (len + 1 < size) buf[len++] = (ch); } while (0)
    PUT(q);
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == q)
            PUT('\\');
        if (*s == '\n') {
            PUT('\\');
            PUT('n');
            continue;
        }
        PUT(*s);
    }
    PUT(q);
#undef PUT
    buf[len] = '\0';
}

void exception_repr(const loop_exception_t *e, char *buf, size_t size)
{
    char msg[LOOP_EXCEPTION_MESSAGE_MAX + 8] = "";
    if (e->message[0] != '\0')
        str_repr(e->message, msg, sizeof msg);
    snprintf(buf, size, "%s(%s)", e->type, msg);
}

/* One callback as format_helpers._format_callback_source names it. */
static void callback_repr(const future_t *f, const done_callback_t *cb, char *buf, size_t size)
{
    loop_namer namer = f->loop != NULL ? loop_errors(f->loop)->namer : NULL;
    if (cb->name != NULL)
        snprintf(buf, size, "%s()", cb->name);
    else if (namer != NULL)
        namer((loop_callback)(void (*)(void))cb->fn, cb->arg, buf, size);
    else
        snprintf(buf, size, "callback(%p)", cb->arg);
}

/* _format_callbacks: "cb=[a()]", "cb=[a(), b()]", "cb=[a(), <3 more>, e()]". */
static void callbacks_repr(const future_t *f, char *buf, size_t size)
{
    size_t n = 0;
    const done_callback_t *last = NULL;
    for (const done_callback_t *cb = f->callbacks; cb != NULL; cb = cb->next, n++)
        last = cb;
    buf[0] = '\0';
    if (n == 0)
        return;
    char first[128], second[128];
    callback_repr(f, f->callbacks, first, sizeof first);
    if (n == 1) {
        snprintf(buf, size, "cb=[%s]", first);
        return;
    }
    callback_repr(f, last, second, sizeof second);
    if (n == 2)
        snprintf(buf, size, "cb=[%s, %s]", first, second);
    else
        snprintf(buf, size, "cb=[%s, <%zu more>, %s]", first, n - 2, second);
}

/* _future_repr_info, as three strings: the state ("pending"), the
 * outcome ("result=None", "exception=RuntimeError('x')", or ""), the
 * callbacks ("cb=[...]" or "").  task.c uses them too. */
void future_repr_parts(const future_t *f, char *state, size_t state_size, char *outcome,
                       size_t outcome_size, char *cbs, size_t cbs_size)
{
    const char *names[] = {"pending", "cancelled", "finished"};
    snprintf(state, state_size, "%s", names[f->state]);
    outcome[0] = '\0';
    if (f->state == FUTURE_FINISHED) {
        char value[256];
        if (f->exception != NULL) {
            exception_repr(f->exception, value, sizeof value);
            snprintf(outcome, outcome_size, "exception=%s", value);
        } else {
            if (f->kind == FUTURE_KIND_GATHER)
                gather_result_repr((const gathering_future_t *)f, value, sizeof value);
            else if (f->result == NULL)
                snprintf(value, sizeof value, "None");
            else
                snprintf(value, sizeof value, "%p", f->result); /* C cannot know what it is */
            snprintf(outcome, outcome_size, "result=%s", value);
        }
    }
    callbacks_repr(f, cbs, cbs_size);
}

char *future_repr(const future_t *f, char *buf, size_t size)
{
    if (f == NULL) {
        snprintf(buf, size, "None");
        return buf;
    }
    if (f->kind == FUTURE_KIND_TASK)
        return task_repr((const task_t *)f, buf, size);
    char state[16], outcome[300], cbs[300];
    future_repr_parts(f, state, sizeof state, outcome, sizeof outcome, cbs, sizeof cbs);
    snprintf(buf, size, "<%s %s%s%s%s%s>", f->class_name, state, outcome[0] ? " " : "", outcome,
             cbs[0] ? " " : "", cbs);
    return buf;
}
/* @end repr */
