/* loop_private.h -- chapter 08: what loop.c lends its two new neighbours,
 * handler.c (failing callbacks, debug mode) and signals.c.  Not part of the
 * interface: a program includes loop.h only.
 *
 * The loop keeps one struct of each (errors, signals) inside its own
 * struct loop; the new files reach theirs through loop_errors() and
 * loop_signals(), and the handles through the few functions below, so that
 * struct loop and struct handle stay where chapter 01 put them, in loop.c.
 */
#ifndef LOOP_PRIVATE_H
#define LOOP_PRIVATE_H

#include "loop.h"
#include "task.h" /* chapter 09: loop_tasks_t below */

#include <stdbool.h>
#include <stdio.h>

/* @region errors */
/* handler.c's state: asyncio's _exception_handler, _debug,
 * slow_callback_duration, _current_handle, plus the error indicator that
 * loop_raise() sets and the loop reads after each callback. */
typedef struct loop_errors {
    loop_exception_handler handler; /* NULL: the default one */
    void *handler_ctx;
    FILE *log;                      /* NULL: stderr */
    loop_namer namer;
    bool debug;
    double slow_callback_duration;
    const handle_t *current;        /* the handle whose callback runs, or NULL */
    bool in_handler;                /* an exception handler runs: loop_raise() is its */
    bool raised;                    /* loop_raise() was called, not yet handled */
    loop_exception_t exception;     /*   and what it said */
} loop_errors_t;
/* @end errors */

/* signals.c's state: asyncio's _signal_handlers, indexed by number. */
#define LOOP_NSIG 65 /* signal numbers 1..64 (Linux's SIGRTMAX); 0 is none */
typedef struct loop_signals {
    handle_t *handlers[LOOP_NSIG]; /* each owns one reference; NULL: none */
    int count;
} loop_signals_t;

loop_errors_t *loop_errors(loop_t *loop);
loop_signals_t *loop_signals(loop_t *loop);

/* fail() of loop.c: the message in loop_error(), errno = err, returns -1. */
int loop_fail(loop_t *loop, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Chapter 10: debug mode's thread check (loop.c's check_thread): -1, EPERM
 * and its message when a thread other than the one running the loop calls. */
int loop_check_thread(loop_t *loop);

/* What handle_repr() and the messages need to know of a handle. */
typedef struct handle_info {
    loop_t *loop;
    loop_callback callback;
    void *arg;
    bool timer;      /* call_at / call_later's: a TimerHandle */
    double when;     /* its deadline, if timer */
    bool cancelled;
    bool named;      /* cancelled in debug mode: the name is kept (asyncio's _repr) */
} handle_info_t;
void handle_info(const handle_t *handle, handle_info_t *info);

/* A new handle with one reference, not queued anywhere (signals.c's). */
handle_t *loop_new_handle(loop_t *loop, loop_callback callback, void *arg);

/* signals.c says when a handle is in its table: while it is, the loop is
 * alive, and handle_cancel() may ask it whether debug mode is on. */
void handle_set_held(handle_t *handle, bool held);

/* asyncio's _add_callback_signalsafe: queue the handle (unless it is
 * cancelled; a handle may be queued twice: one run per signal), then wake
 * the poll.  -1 with ENOMEM if the deque cannot grow. */
int loop_add_callback_signalsafe(loop_t *loop, handle_t *handle);

/* The self-pipe's write end, or -1 when it is an eventfd (which cannot
 * carry signal numbers). */
int loop_signal_fd(const loop_t *loop);

/* signals.c, called by loop.c: the bytes read from the self-pipe (asyncio's
 * _process_self_data: a 0 byte is a plain wake-up, any other a signal
 * number); and, from loop_close(), remove every handler. */
void signals_process(loop_t *loop, const unsigned char *data, size_t n);
void signals_close(loop_t *loop);

/* @region tasks */
/* Chapter 09: future.c's state in the loop.  Every future (task or not)
 * is in the list from its creation to its free, oldest first: asyncio's
 * _all_tasks (a WeakSet, so: until it is garbage) for tasks, and for
 * every future the means by which loop_free() finds the cycles nobody
 * will break. */
typedef struct loop_tasks {
    future_t *first, *last;       /* every live future of this loop, oldest first */
    task_t *current;              /* asyncio.current_task(): whose step runs now */
    loop_task_factory factory;    /* loop_set_task_factory(); NULL: task_new */
    void *factory_ctx;
} loop_tasks_t;
loop_tasks_t *loop_tasks(loop_t *loop);

/* future.c, called by loop_free(): report the tasks still pending, break
 * the cycles that keep them alive, and detach every future still held. */
void futures_loop_free(loop_t *loop);

/* A handle that owns one reference to its arg: release_arg(arg) is called
 * when the handle is freed (after its callback ran, or unrun, when the
 * loop drops it at loop_close()). */
void handle_set_release(handle_t *handle, void (*release_arg)(void *arg));

/* Scheduling several callbacks at once, or none (future.c's
 * __schedule_callbacks under out of memory): reserve room for n handles,
 * then push them, which cannot fail.  loop_push_ready() takes the
 * reference loop_new_handle() made. */
int loop_reserve_ready(loop_t *loop, size_t n);
void loop_push_ready(loop_t *loop, handle_t *handle);
/* @end tasks */

/* @region executors */
/* Chapter 10: bridge.c's state in the loop.  asyncio's _default_executor
 * and _executor_shutdown_called, plus what C needs and Python's garbage
 * collector gives for free: the loop's list of chains (bridge.c), each a
 * link through which another thread may still reach the loop (a job's
 * result coming home, a cancellation going to a task), so that loop_free()
 * can cut them all before the memory goes. */
typedef struct executor executor_t;
struct chain;
typedef struct loop_executors {
    executor_t *default_executor; /* run_in_executor(NULL, ...)'s; NULL: none yet */
    executor_t *created;          /* the default executor the loop made: it frees it */
    bool shutdown_called;         /* _executor_shutdown_called */
    struct chain *chains;         /* the live chains (loop's thread only) */
    struct shutdown_thread *shutdown_thread; /* shutdown_default_executor's, until joined */
} loop_executors_t;
loop_executors_t *loop_executors(loop_t *loop);

/* bridge.c, called by loop.c: loop_close() shuts the default executor down
 * without waiting (base_events.close()); loop_free() waits for the one the
 * loop made, frees it, and cuts every chain (loop.h: "close"). */
void executors_loop_close(loop_t *loop);
void executors_loop_free(loop_t *loop);

/* loop_call_soon_threadsafe() whose handle owns one reference to arg:
 * release_arg(arg) when the handle goes (on the loop's thread: after the
 * callback ran, or unrun at loop_close()).  On refusal release_arg is NOT
 * called. */
handle_t *loop_call_soon_threadsafe_owned(loop_t *loop, loop_callback callback, void *arg,
                                          void (*release_arg)(void *arg));
/* @end executors */

/* handler.c, called by run_once for each handle it runs: call the
 * callback, then act on what loop_raise() recorded (Handle._run), timing
 * it in debug mode.  Returns 1 if the error escapes (KeyboardInterrupt,
 * SystemExit: run_forever must return), else 0.  Chapter 11: run_once
 * passes the handle's callback and arg, which it has at hand (handle_info()
 * copied the whole handle for them, once per callback). */
int errors_run_handle(loop_t *loop, handle_t *handle, loop_callback callback, void *arg);

#endif
