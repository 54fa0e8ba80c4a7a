/* future_private.h -- chapter 09: the structs behind future.h and task.h,
 * shared by future.c, task.c, gather.c, sleep.c and runner.c.  Not part of
 * the interface: a program includes loop.h (or task.h) only.
 *
 * Three kinds of future, as asyncio has three classes: Future, Task (a
 * future that drives a coroutine) and _GatheringFuture (gather()'s, whose
 * cancel() cancels its children).  C has no subclasses; a task and a
 * gathering future begin with a future_t, and the future's `kind` says
 * which calls to send where (future_cancel is Task.cancel on a task). */
#ifndef FUTURE_PRIVATE_H
#define FUTURE_PRIVATE_H

#include "loop_private.h"

#include <stdbool.h>

typedef enum future_kind { FUTURE_KIND_FUTURE, FUTURE_KIND_TASK, FUTURE_KIND_GATHER } future_kind;

/* @region done_callback */
/* One entry of Future._callbacks: fn(future) with its arg.  While the
 * future is pending the entries wait in its list; when it completes,
 * each gets a handle and goes to the ready deque, and the entry becomes
 * the handle's arg (the handle frees it: done_callback_free).  An entry
 * may own a reference to arg (release != NULL): a task's wakeup holds the
 * task, as CPython's bound method self.__wakeup holds self. */
typedef struct done_callback {
    future_callback fn;
    void *arg;
    void (*release)(void *arg); /* NULL: arg is borrowed */
    const char *name;           /* its name in reprs ("Task.task_wakeup"), or NULL */
    future_t *future;           /* once scheduled: the future, one reference */
    handle_t *handle;           /* between prepare and commit (schedule_callbacks) */
    struct done_callback *next;
    bool embedded;              /* chapter 11: it is its future's callback0, not malloc'd */
} done_callback_t;
/* @end done_callback */

/* @region struct */
struct future {
    loop_t *loop;             /* NULL once the loop is freed (futures_loop_free) */
    unsigned refs;            /* owners: see future.h */
    future_kind kind;
    const char *class_name;   /* "Future", "Task", "_GatheringFuture": reprs, messages */
    future_state state;       /* _state */
    void *result;             /* _result */
    /* Chapter 11: what only an error needs lives out of line, allocated
     * when there is one (NULL: Python's None).  Most futures finish with a
     * result and are never cancelled with a message: they carry three
     * pointers, not 544 bytes of buffers to clear at every creation. */
    loop_exception_t *exception;    /* _exception (owned) */
    bool log_traceback;       /* __log_traceback: an error nobody retrieved yet */
    char *cancel_message;     /* _cancel_message (owned) */
    const loop_exception_t *cancelled_exc; /* _cancelled_exc: the CancelledError that */
                              /*   left a task's coroutine (raised once more); it is */
                              /*   the finished coroutine's own c->error, not a copy */
    done_callback_t *callbacks, *callbacks_tail; /* _callbacks, in order */
    done_callback_t callback0; /* chapter 11: room for one entry (fn NULL: free) */
    future_t *prev, *next;    /* the loop's list of live futures (loop_tasks_t) */
    const void *mark;         /* gather(): "seen already", for one call */
};

/* Chapter 11: room for "Task-" and the 20 digits of 2^64 - 1. */
enum { TASK_NAME_MAX = sizeof "Task-18446744073709551615" };

struct task {
    future_t future;          /* first: a task_t * is a future_t * */
    coro_t *coro;             /* _coro, owned */
    char *name;               /* _name: default_name, or a copy of its own */
    char default_name[TASK_NAME_MAX]; /* "Task-N" (chapter 11: no malloc for it) */
    future_t *fut_waiter;     /* _fut_waiter, one reference, or NULL */
    bool must_cancel;         /* _must_cancel */
    unsigned num_cancels_requested; /* _num_cancels_requested */
    bool log_destroy_pending; /* _log_destroy_pending */
    loop_exception_t *step_error; /* call_soon(self.__step, exc): the scheduled */
                              /*   step throws it in (owned; NULL: send(None)) */
};

typedef struct gathering_future {
    future_t future;          /* first */
    size_t n;                 /* len(children), a child listed twice counted twice */
    size_t nfuts;             /* distinct children */
    size_t nfinished;
    bool return_exceptions;
    bool cancel_requested;    /* _cancel_requested */
    future_t **children;      /* one reference each */
    gather_result_t *results; /* the result, once all are done (owned) */
} gathering_future_t;
/* @end struct */

/* future.c, for its neighbours. */
void future_init(future_t *f, loop_t *loop, future_kind kind, const char *class_name);
bool future_check(const future_t *f); /* its loop still exists; errno EINVAL if not */

/* The base class's methods (Future.set_result, Future.cancel, ...), which
 * Task and _GatheringFuture reach with super(). */
int future_base_set_result(future_t *f, void *value);
int future_base_set_exception(future_t *f, const loop_exception_t *error);
int future_base_cancel(future_t *f, const char *msg);
/* Chapter 11: a cancel message's own copy (NULL for NULL); -1 ENOMEM. */
int cancel_message_dup(loop_t *loop, const char *msg, char **out);
void future_make_cancelled_error(future_t *f, loop_exception_t *error);

/* add_done_callback, with an arg the entry owns (release(arg) when the
 * entry goes) and a name for reprs.  On failure release is NOT called. */
int future_add_done_callback_owned(future_t *f, future_callback fn, void *arg,
                                   void (*release)(void *arg), const char *name);

/* Drop every entry not yet scheduled (releasing what they own). */
void future_clear_callbacks(future_t *f);

/* call_soon(fn, arg) whose handle owns a reference to arg (release(arg)
 * when it goes).  On failure release is NOT called. */
handle_t *loop_call_soon_owned(loop_t *loop, loop_callback fn, void *arg,
                               void (*release)(void *arg));

/* Release helpers with the shape handle_set_release wants. */
void future_release_arg(void *future);

/* _future_repr_info as three strings: state, outcome, callbacks. */
void future_repr_parts(const future_t *f, char *state, size_t state_size, char *outcome,
                       size_t outcome_size, char *cbs, size_t cbs_size);

/* add_done_callback in two steps, for a caller that adds several and
 * wants all or none (gather): done_callback_new() allocates the entry, and
 * for a future that is done already its handle (the caller then reserves
 * room in the ready deque for it); done_callback_add() cannot fail. */
done_callback_t *done_callback_new(future_t *f, future_callback fn, void *arg,
                                   void (*release)(void *arg), const char *name);
void done_callback_add(future_t *f, done_callback_t *cb);
void done_callback_discard(done_callback_t *cb); /* never added: free it (release not called) */

/* Python's repr() of an exception: RuntimeError('x'), TimeoutError(). */
void exception_repr(const loop_exception_t *e, char *buf, size_t size);
/* Python's repr() of a str: 'text'. */
void str_repr(const char *s, char *buf, size_t size);
void exception_set(loop_exception_t *e, const char *type, const char *message);

/* task.c, for handler.c: the task whose step or wakeup a handle runs
 * (so debug mode names the task, as base_events._format_handle does), or
 * NULL. */
const task_t *task_of_callback(loop_callback callback, void *arg);
/* future.c: the done callback a handle runs, or NULL if it runs something else. */
const done_callback_t *done_callback_of(loop_callback callback, void *arg);

/* task.c, called when a task's last reference goes and by loop_free(). */
void task_finalize(task_t *t);         /* "Task was destroyed but it is pending!" */
void task_destroy(task_t *t);          /* release what it holds (not the memory) */
void task_break_cycle(task_t *t);      /* loop_free(): forget the waiter */
void gather_destroy(gathering_future_t *g);
int gather_cancel(gathering_future_t *g, const char *msg);
void gather_result_repr(const gathering_future_t *g, char *buf, size_t size);

#endif
