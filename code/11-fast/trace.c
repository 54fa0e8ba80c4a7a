/* trace.c -- run a scenario on the virtual clock and print its trace.
 *
 *     trace SCENARIO         (SCENARIO may be '-' for stdin)
 *     trace --stage-info     print this stage's number (for cpython_trace.py --stage N)
 *     trace --rules=miniloop SCENARIO
 *                            run it by article 000's MiniLoop rules instead
 *                            (loop_set_rules in loop.h): not asyncio's trace
 *
 * The scenario language and the trace format are the book's appendix C;
 * tests/conformance/cpython_trace.py runs the same scenario on CPython's
 * own asyncio loop, and the two traces must be equal, byte for byte.
 *
 * Each callback prints "TIME tick N LABEL" and then runs the actions
 * nested under its line.  `cancel LABEL` cancels the most recent handle
 * that LABEL's line scheduled; trace keeps that handle (handle_retain), as
 * the Python runner keeps it in a dict, because the cancel may come after
 * the callback ran.  Time moves only in the wait hook, trace_wait():
 * it is the harness's selector, the one place where "waiting" happens.
 * A malformed scenario: "FILE:LINE:COL: message" on stderr, exit status 2,
 * nothing run.
 *
 * Chapter 08 adds the loop's life: a callback that fails (raise: the
 * exception handler's output is part of the trace, the loop's log being
 * stdout), one that escapes (interrupt: run_forever returns, the harness
 * says so and runs the loop again), one that blocks (block: the clock
 * moves while it runs), debug mode, custom and failing handlers, run and
 * close at any point (a refusal is a trace line), and SIGUSR1: a handler
 * (sighandler), its removal, and the signal arriving at a virtual time.
 *
 * Chapter 09 adds futures and tasks.  A `task` or `coro` line's body is
 * run by one generic coroutine, body_t: a coro_t whose step walks the
 * body's lines, runs the callback-level ones as execute() runs any line,
 * and suspends at each await-like line (sleep, await, call, gather,
 * wait_for) with what it awaits in its own frame.  Every future and task
 * the scenario makes is kept until the end (CPython's harness keeps them
 * too), so when "exception was never retrieved" would be reported never
 * depends on when a reference goes; those three messages are dropped
 * before the exception handler sees them (trace_handler).
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "scenario.h"
#include "task.h"

#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STAGE 11
#define SIGNAL SIGUSR1 /* the one signal of the scenarios */
#define TICK_LIMIT 100000

/* One byte that arrives on an io label's socket at a virtual time, or
 * (io -1) a SIGUSR1 that arrives then. */
typedef struct pending {
    double when;
    int io;
} pending_t;

static struct {
    loop_t *loop;
    scenario_t scenario;
    int (*sockets)[2]; /* per io label: [0] read end (watched), [1] write end */
    pending_t *pending; /* io bytes, sorted by time once set up */
    size_t npending;
    size_t next;        /* pending[next ..]: the bytes not yet delivered */
    long *written;      /* per io label: the last tick that wrote a byte to it */
    long ticks;         /* waits so far: the tick number of the trace */
    bool hit_limit;
    handle_t **recent;  /* per call line, at its rank (action_t's `call`): the most */
                        /*   recent handle it scheduled, KEPT (handle_retain), or NULL */
    future_t **futures; /* per future / task line, at its rank: the most recent one */
                        /*   it made (borrowed: `kept` holds it), or NULL */
    future_t **kept;    /* every future and task made, one reference each, */
    size_t nkept, capkept; /*   until the end */
    handler_kind handler; /* what `handler` chose: trace_handler passes contexts on */
    const action_t *failing; /*   (failing: the line, for custom_handler) */
    bool over;          /* the trace has ended: nothing more is printed */
} t;

/* The harness failed, not the scenario: say what failed and why (for a
 * loop function, loop_error(); for a system call, strerror(errno)), and
 * exit with status 3. */
static void die(const char *what, const char *why)
{
    fprintf(stderr, "trace: %s: %s\n", what, why);
    exit(3);
}

static bool execute(const action_t *a, const char *in);
static void trace_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* @region callbacks */
/* A raise or an interrupt ends the callback: the lines after it do not run. */
static void run_children(const action_t *a)
{
    for (const action_t *c = a->children; c != NULL; c = c->next)
        if (execute(c, a->label))
            break;
}

static void print_trace(const char *label)
{
    trace_line("%s", label);
}

/* cb_LABEL of a soon / later / at line. */
static void timer_cb(loop_t *loop, void *arg)
{
    (void)loop;
    const action_t *a = arg;
    print_trace(a->label);
    run_children(a);
}

/* cb_LABEL of an io label: read what arrived, then as any callback. */
static void io_cb(loop_t *loop, void *arg)
{
    (void)loop;
    const action_t *first = arg; /* the label's first io line */
    char buf[4096];
    while (read(t.sockets[first->io][0], buf, sizeof buf) > 0)
        ;
    print_trace(first->label);
    run_children(first);
}
/* @end callbacks */

/* @region recent */
/* Keep the handle a line just scheduled; let go of the one it replaces.
 * Its slot is at the line's rank among the calls, which the parser gives
 * each call line and each cancel line (that of the line it names): no
 * search, however long the scenario. */
static const char *verb(const action_t *a)
{
    static const char *names[] = {"soon",       "later",     "at",     "stop",  "io",
                                  "cancel",     "threadsafe", "raise", "interrupt",
                                  "block",      "debug",     "handler", "run",  "close",
                                  "sighandler", "sigremove", "signal",
                                  "future",     "task",      "coro",   "set",   "fail",
                                  "run_until",  "main",      "sleep",  "await", "call",
                                  "gather",     "gather_exceptions", "wait_for",
                                  "return",     "catch"};
    return names[a->kind];
}

/* A line of the trace: "TIME tick N TEXT".  Nothing once the trace has
 * ended (a future released at the end must not print). */
static void trace_line(const char *fmt, ...)
{
    if (t.over)
        return;
    printf("%.6f tick %ld ", loop_time(t.loop), t.ticks);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* A line as the trace names it: its verb and the labels it names, no
 * numbers, no values ("gather a b", "set f", "soon x"). */
static void what(const action_t *a, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s", verb(a));
    if (a->nrefs == 0 && a->label[0] != '\0' && a->kind != ACTION_HANDLER)
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, " %s", a->label);
    for (int i = 0; i < a->nrefs; i++)
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, " %s", a->refs[i].label);
}

/* A call the loop refused (chapter 08: after close, or run inside a
 * callback): a line of the trace, as the Python runner prints
 * RuntimeError's words. */
static void refused(const action_t *a, const char *why)
{
    char name[SCENARIO_GATHER_MAX * (SCENARIO_LABEL_MAX + 1) + 32];
    what(a, name, sizeof name);
    trace_line("%s refused: %s", name, why);
}

static void remember(const action_t *a, handle_t *handle)
{
    if (handle == NULL && loop_is_closed(t.loop)) {
        refused(a, "Event loop is closed"); /* threadsafe leaves loop_error() alone */
        return;
    }
    if (handle == NULL)
        die(a->kind == ACTION_SOON ? "call_soon" : a->kind == ACTION_LATER ? "call_later"
            : a->kind == ACTION_AT ? "call_at" : "call_soon_threadsafe",
            loop_error(t.loop));
    handle_retain(handle);
    handle_t **slot = &t.recent[a->call];
    if (*slot != NULL)
        handle_release(*slot);
    *slot = handle;
}
/* @end recent */

/* @region handlers */
/* handler custom: one line per context; handler failing: the same, then
 * it fails itself (RuntimeError('handler failed')). */
static void custom_handler(loop_t *loop, const loop_context_t *c, void *failing)
{
    if (c->exception != NULL)
        trace_line("handler: %s (%s: %s)", c->message, c->exception->type, c->exception->message);
    else
        trace_line("handler: %s", c->message);
    if (failing != NULL)
        loop_raise(loop, "RuntimeError", "handler failed");
}

/* The handler the loop always has (chapter 09): when Future.__del__ and
 * Task.__del__ report depends on when the last reference goes, which the
 * two harnesses cannot make the same (CPython: refcounts and the cycle
 * collector), so their messages are dropped here, before the scenario's
 * handler -- default, custom or failing -- sees them: "Task was destroyed
 * but it is pending!" and "CLASS exception was never retrieved" for every
 * class (Future, Task, gather's _GatheringFuture). */
static void trace_handler(loop_t *loop, const loop_context_t *c, void *ctx)
{
    (void)ctx;
    static const char destroyed[] = "Task was destroyed but it is pending!";
    static const char never[] = " exception was never retrieved";
    size_t n = c->message != NULL ? strlen(c->message) : 0;
    if (n > 0 && (strcmp(c->message, destroyed) == 0 ||
                  (n >= sizeof never - 1 && strcmp(c->message + n - (sizeof never - 1), never) == 0)))
        return;
    if (t.over)
        return;
    if (t.handler == HANDLER_DEFAULT)
        loop_default_exception_handler(loop, c);
    else
        custom_handler(loop, c, t.handler == HANDLER_FAILING ? (void *)t.failing : NULL);
}

/* How the loop names the trace's callbacks: LABEL(), as CPython names the
 * Python runner's callable objects. */
static void timer_cb(loop_t *loop, void *arg);
static void io_cb(loop_t *loop, void *arg);
static void trace_done(loop_t *loop, future_t *f, void *arg);

static void namer(loop_callback callback, void *arg, char *buf, size_t size)
{
    const action_t *a = arg;
    if (callback == timer_cb || callback == io_cb ||
        callback == (loop_callback)(void (*)(void))trace_done)
        snprintf(buf, size, "%s()", a != NULL ? a->label : "None");
    else /* the library's own callbacks (a task's step): no scenario line */
        snprintf(buf, size, "callback()");
}
/* @end handlers */

static void run_loop(const action_t *line);
static void execute_tasks(const action_t *a);

/* @region execute */
/* Run one line; `in` is the label of the callback running it (NULL at
 * setup).  Returns true for raise and interrupt: the callback ends. */
static bool execute(const action_t *a, const char *in)
{
    switch (a->kind) {
    case ACTION_SOON:
        remember(a, loop_call_soon(t.loop, timer_cb, (void *)a));
        break;
    case ACTION_LATER:
        remember(a, loop_call_later(t.loop, a->number, timer_cb, (void *)a));
        break;
    case ACTION_AT:
        remember(a, loop_call_at(t.loop, a->number, timer_cb, (void *)a));
        break;
    case ACTION_CANCEL: { /* the most recent handle, future or task of the label, if any */
        handle_t *h = t.recent[a->call];
        if (h != NULL)
            handle_cancel(h);
        if (t.futures[a->call] != NULL && future_cancel(t.futures[a->call], NULL) < 0)
            die("cancel", loop_error(t.loop));
        break;
    }
    case ACTION_STOP:
        loop_stop(t.loop);
        break;
    case ACTION_IO: /* top level only: at setup */
        if (t.scenario.io[a->io] == a) {
            int *sv = t.sockets[a->io];
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
                die("socketpair", strerror(errno));
            fcntl(sv[0], F_SETFL, O_NONBLOCK);
            fcntl(sv[1], F_SETFL, O_NONBLOCK);
            if (loop_add_reader(t.loop, sv[0], io_cb, (void *)a) < 0) {
                if (!loop_is_closed(t.loop))
                    die("add_reader", loop_error(t.loop));
                refused(a, loop_error(t.loop)); /* and no byte: as the runner */
                break;
            }
        }
        t.pending[t.npending++] = (pending_t){a->number, a->io};
        break;
    case ACTION_THREADSAFE:
        /* From the loop's own thread, so the order is deterministic: a
         * call_soon plus a byte in the self-pipe, whose reader runs in the
         * next poll's tick and prints nothing.  The handle is borrowed, as
         * call_soon's: on this thread it may be retained at once. */
        remember(a, loop_call_soon_threadsafe(t.loop, timer_cb, (void *)a));
        break;
    case ACTION_RAISE:
        loop_raise(t.loop, "RuntimeError", "%s", in);
        return true;
    case ACTION_INTERRUPT:
        loop_raise(t.loop, LOOP_KEYBOARD_INTERRUPT, "%s", in);
        return true;
    case ACTION_BLOCK: /* the callback runs for a while: the clock moves */
        if (loop_set_time(t.loop, loop_time(t.loop) + a->number) < 0)
            die("set_time", loop_error(t.loop));
        break;
    case ACTION_DEBUG:
        loop_set_debug(t.loop, a->number != 0);
        break;
    case ACTION_HANDLER: /* trace_handler passes contexts on to it */
        t.handler = a->handler;
        t.failing = a;
        break;
    case ACTION_RUN:
        if (in == NULL) {
            run_loop(a);
        } else if (loop_run_forever(t.loop) < 0) { /* always refused here */
            refused(a, loop_error(t.loop));
        }
        break;
    case ACTION_CLOSE:
        if (loop_close(t.loop) < 0)
            refused(a, loop_error(t.loop));
        break;
    case ACTION_SIGHANDLER:
        if (loop_add_signal_handler(t.loop, SIGNAL, timer_cb, (void *)a) < 0) {
            if (!loop_is_closed(t.loop))
                die("add_signal_handler", loop_error(t.loop));
            refused(a, loop_error(t.loop));
            break;
        }
        remember(a, loop_get_signal_handler(t.loop, SIGNAL));
        break;
    case ACTION_SIGREMOVE:
        loop_remove_signal_handler(t.loop, SIGNAL);
        break;
    case ACTION_SIGNAL: /* top level only: at setup */
        t.pending[t.npending++] = (pending_t){a->number, -1};
        break;
    case ACTION_FUTURE:
    case ACTION_TASK:
    case ACTION_CORO:
    case ACTION_SET:
    case ACTION_FAIL:
    case ACTION_RUN_UNTIL:
    case ACTION_MAIN:
        execute_tasks(a);
        break;
    default: /* a body's own lines: body_step runs them */
        break;
    }
    return false;
}
/* @end execute */

/* @region tasks */
/* ---- chapter 09: futures, tasks and the bodies they run ---------------- */

/* Keep a future or a task until the end of the run (one reference). */
static void keep(future_t *f)
{
    if (t.nkept == t.capkept) {
        size_t cap = t.capkept ? 2 * t.capkept : 64;
        future_t **k = realloc(t.kept, cap * sizeof *k);
        if (k == NULL)
            die("keep", strerror(ENOMEM));
        t.kept = k;
        t.capkept = cap;
    }
    future_retain(f);
    t.kept[t.nkept++] = f;
}

/* An error as the trace prints it: "TYPE: MESSAGE", or "TYPE" when the
 * message is empty; a message that ends in a repr ("Task cannot await on
 * itself: <Task ...>") up to the ": <". */
static const char *error_text(const loop_exception_t *e, char *buf, size_t size)
{
    const char *cut = strstr(e->message, ": <");
    int n = cut != NULL ? (int)(cut - e->message) : (int)strlen(e->message);
    if (n == 0)
        snprintf(buf, size, "%s", e->type);
    else
        snprintf(buf, size, "%s: %.*s", e->type, n, e->message);
    return buf;
}

/* A value: NULL is None; every other value of a scenario is a label word
 * (return V, set F V), a const char *. */
static const char *value_text(const void *v)
{
    return v != NULL ? (const char *)v : "None";
}

/* A gather's list: "[a, None, RuntimeError: b]". */
static const char *gather_text(const gather_result_t *r, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < r->n; i++) {
        char e[LOOP_EXCEPTION_MESSAGE_MAX + 40];
        const char *item = r->items[i].failed ? error_text(&r->items[i].error, e, sizeof e)
                                              : value_text(r->items[i].value);
        n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", i > 0 ? ", " : "", item);
    }
    snprintf(buf + n, n < size ? size - n : 0, "]");
    return buf;
}

/* The done callback of every `future` and `task` line: its outcome. */
static void trace_done(loop_t *loop, future_t *f, void *arg)
{
    (void)loop;
    const action_t *a = arg;
    loop_exception_t e;
    void *value;
    char buf[LOOP_EXCEPTION_MESSAGE_MAX + 40];
    if (future_cancelled(f))
        trace_line("%s: cancelled", a->label);
    else if (future_exception(f, &e) == 1)
        trace_line("%s: error %s", a->label, error_text(&e, buf, sizeof buf));
    else if (future_result(f, &value, &e) == 0)
        trace_line("%s: result %s", a->label, value_text(value));
}

/* @region body */
/* The coroutine of a `task` or `coro` line: its body, interpreted.  What
 * an await-like line awaits lives in the frame: a sleep, a wait_for, a
 * called body (call C: its own body_t, allocated), or a future (await X,
 * and gather's future, which the frame holds while it waits). */
typedef struct body {
    coro_t coro;
    const action_t *owner;  /* the task or coro line: its label, its body */
    const action_t *line;   /* the line it is at */
    bool catching;          /* a `catch` line was passed */
    future_t *gathered;     /* gather's future, held while awaited */
    sleep_t sleep;          /* the frame of asyncio.sleep(D) */
    wait_for_t wait_for;    /* the frame of asyncio.wait_for(X, D) */
} body_t;

static coro_t *body_new(const action_t *owner);

static void body_release(coro_t *c)
{
    body_t *b = (body_t *)c;
    future_release(b->gathered);
    free(b);
}

/* A task for a coroutine, through the loop's task factory (below); the
 * reference create_task returns is dropped at once: `kept` holds one. */
static future_t *new_task(coro_t *coro)
{
    task_t *task = loop_create_task(t.loop, coro);
    if (task == NULL)
        return NULL;
    task_release(task);
    return task_future(task);
}

/* The futures a line names, in order: the most recent future or task of
 * each label, a new task for each coro label (as gather and wait_for
 * wrap a coroutine).  0, or -1 after printing "VERB X refused: no X yet"
 * when a future or task is not there yet (nothing is made then). */
static int resolve(const action_t *a, future_t **out)
{
    for (int i = 0; i < a->nrefs; i++) {
        const action_t *def = a->refs[i].def;
        if (def->kind != ACTION_CORO && t.futures[def->call] == NULL) {
            char why[SCENARIO_LABEL_MAX + 16];
            snprintf(why, sizeof why, "no %s yet", def->label);
            refused(a, why);
            return -1;
        }
    }
    for (int i = 0; i < a->nrefs; i++) {
        const action_t *def = a->refs[i].def;
        out[i] = def->kind == ACTION_CORO ? new_task(body_new(def)) : t.futures[def->call];
        if (out[i] == NULL)
            die("create_task", loop_error(t.loop));
    }
    return 0;
}

/* Set up what an await-like line awaits.  Returns the future to await
 * (*inner NULL), or the coroutine to call (*inner), or NULL with *inner
 * NULL when the line was refused. */
static future_t *prepare_await(body_t *b, coro_t **inner)
{
    const action_t *a = b->line;
    future_t *args[SCENARIO_GATHER_MAX];
    *inner = NULL;
    if (a->kind == ACTION_SLEEP) {
        *inner = sleep_init(&b->sleep, a->number);
        return NULL;
    }
    if (a->kind == ACTION_CALL) {
        *inner = body_new(a->refs[0].def);
        return NULL;
    }
    if (resolve(a, args) < 0)
        return NULL;
    switch (a->kind) {
    case ACTION_AWAIT:
        return args[0];
    case ACTION_WAIT_FOR:
        *inner = wait_for_init(&b->wait_for, args[0], a->number);
        return NULL;
    default: /* gather, gather_exceptions */
        b->gathered = loop_gather(t.loop, args, (size_t)a->nrefs,
                                  a->kind == ACTION_GATHER_EXCEPTIONS);
        if (b->gathered == NULL)
            die("gather", loop_error(t.loop));
        return b->gathered;
    }
}

/* The line an await-like line prints when it resumes:
 * "LABEL WHAT -> OUTCOME". */
static void print_outcome(body_t *b)
{
    coro_t *c = &b->coro;
    char name[SCENARIO_GATHER_MAX * (SCENARIO_LABEL_MAX + 1) + 32];
    char out[SCENARIO_GATHER_MAX * (LOOP_EXCEPTION_MESSAGE_MAX + 40) + 8];
    what(b->line, name, sizeof name);
    if (c->failed)
        trace_line("%s %s -> error %s", b->owner->label, name, error_text(&c->error, out, sizeof out));
    else if (b->gathered != NULL)
        trace_line("%s %s -> %s", b->owner->label, name,
                   gather_text((const gather_result_t *)c->value, out, sizeof out));
    else
        trace_line("%s %s -> %s", b->owner->label, name, value_text(c->value));
}

static bool is_await_line(const action_t *a)
{
    return a->kind == ACTION_SLEEP || a->kind == ACTION_AWAIT || a->kind == ACTION_CALL ||
           a->kind == ACTION_GATHER || a->kind == ACTION_GATHER_EXCEPTIONS ||
           a->kind == ACTION_WAIT_FOR;
}

/* async def LABEL(): the body's lines, one after the other.  Everything
 * that must survive an await is in *b (b->line is the loop's variable). */
static coro_status body_step(coro_t *c)
{
    body_t *b = (body_t *)c;
    CORO_BEGIN(c);
    trace_line("%s start", b->owner->label);
    for (b->line = b->owner->children; b->line != NULL; b->line = b->line->next) {
        if (b->line->kind == ACTION_CATCH) {
            b->catching = true;
            continue;
        }
        if (b->line->kind == ACTION_RETURN)
            CORO_RETURN(c, (void *)b->line->value);
        if (b->line->kind == ACTION_RAISE)
            CORO_RAISE(c, "RuntimeError", "%s", b->owner->label);
        if (!is_await_line(b->line)) {
            execute(b->line, b->owner->label);
            continue;
        }
        {
            coro_t *inner;
            future_t *fut = prepare_await(b, &inner);
            if (inner != NULL)
                c->inner = inner;
            else if (fut != NULL)
                c->awaiting = fut;
            else
                continue; /* refused: the body goes on */
        }
        if (c->inner != NULL) {
            CORO_TRY_CALL(c, c->inner);
        } else {
            CORO_TRY_AWAIT(c, c->awaiting);
        }
        print_outcome(b);
        future_release(b->gathered);
        b->gathered = NULL;
        c->awaiting = NULL;
        if (c->failed) {
            if (!b->catching) {
                c->state = -1;
                return CORO_RAISED; /* the error goes on up */
            }
            coro_clear_error(c); /* except BaseException: the next line */
        }
    }
    CORO_END(c);
}
/* @end body */

static coro_t *body_new(const action_t *owner)
{
    body_t *b = calloc(1, sizeof *b);
    if (b == NULL)
        die("body", strerror(ENOMEM));
    b->owner = owner;
    return coro_init(&b->coro, body_step, owner->label, body_release);
}

/* loop.set_task_factory: every task is named after the coroutine it runs
 * (a body's label: `task T`, or a coro C that gather, wait_for,
 * run_until or main wraps in a task), and kept until the end. */
static task_t *task_factory(loop_t *loop, coro_t *coro, void *ctx)
{
    (void)ctx;
    task_t *task = task_new(loop, coro, coro->name);
    /* The scenario's tasks only: the runner's own (shutdown_asyncgens ...)
     * may run coroutines whose frames are on its stack. */
    if (task != NULL && coro->step == body_step)
        keep(task_future(task));
    return task;
}

/* The line's most recent future or task, replaced. */
static void remember_future(const action_t *a, future_t *f)
{
    t.futures[a->call] = f;
    if (future_add_done_callback(f, trace_done, (void *)a) < 0)
        die("add_done_callback", loop_error(t.loop));
}

/* "run_until X -> OUTCOME", "main C -> OUTCOME". */
static void print_run(const action_t *a, int rc, future_t *f, void *value, loop_exception_t *e)
{
    char buf[LOOP_EXCEPTION_MESSAGE_MAX + 40];
    if (rc == 0 && f != NULL && future_result(f, &value, e) < 0)
        rc = -1;
    if (rc == 0)
        trace_line("%s %s -> %s", verb(a), a->label, value_text(value));
    else
        trace_line("%s %s -> error %s", verb(a), a->label, error_text(e, buf, sizeof buf));
}

/* A refusal of run_until_complete as an error: loop_error() holds
 * "KeyboardInterrupt: a" (EINTR) or a RuntimeError's words. */
static void loop_refusal(loop_exception_t *e)
{
    const char *why = loop_error(t.loop);
    const char *type = "RuntimeError";
    if (errno == EINTR && strncmp(why, "KeyboardInterrupt: ", 19) == 0) {
        type = "KeyboardInterrupt";
        why += 19;
    }
    snprintf(e->type, sizeof e->type, "%s", type);
    snprintf(e->message, sizeof e->message, "%s", why);
}

/* The lines of chapter 09 that execute() hands over. */
static void execute_tasks(const action_t *a)
{
    future_t *args[SCENARIO_GATHER_MAX];
    loop_exception_t e;
    switch (a->kind) {
    case ACTION_FUTURE: {
        future_t *f = loop_create_future(t.loop);
        if (f == NULL)
            die("create_future", loop_error(t.loop));
        keep(f);
        future_release(f);
        remember_future(a, f);
        break;
    }
    case ACTION_TASK: {
        future_t *f = new_task(body_new(a));
        if (f == NULL) { /* a closed loop */
            refused(a, loop_error(t.loop));
            break;
        }
        remember_future(a, f);
        break;
    }
    case ACTION_CORO: /* a definition: it runs nothing */
        break;
    case ACTION_SET:
    case ACTION_FAIL:
        if (resolve(a, args) < 0)
            break;
        if ((a->kind == ACTION_SET ? future_set_result(args[0], (void *)a->value)
                                   : future_fail(args[0], "RuntimeError", "%s", a->label)) < 0)
            refused(a, loop_error(t.loop));
        break;
    case ACTION_RUN_UNTIL: {
        /* run_until_complete checks that the loop is open before it wraps
         * a coroutine in a task (ensure_future) */
        if (a->refs[0].def->kind == ACTION_CORO && loop_is_closed(t.loop)) {
            snprintf(e.type, sizeof e.type, "RuntimeError");
            snprintf(e.message, sizeof e.message, "Event loop is closed");
            print_run(a, -1, NULL, NULL, &e);
            break;
        }
        if (resolve(a, args) < 0)
            break;
        int rc = loop_run_until_complete(t.loop, args[0]);
        if (rc < 0)
            loop_refusal(&e);
        print_run(a, rc, rc == 0 ? args[0] : NULL, NULL, &e);
        break;
    }
    case ACTION_MAIN: {
        void *value = NULL;
        int rc = loop_run_main_on(t.loop, body_new(a->refs[0].def), &value, &e);
        print_run(a, rc, NULL, value, &e);
        break;
    }
    default:
        break;
    }
}
/* @end tasks */

/* @region wait */
/* The harness's selector: the loop asks to wait `timeout` seconds (-1:
 * until an fd is ready).  Jump the clock to the end of the wait, or to the
 * first io byte that arrives before it; deliver the bytes due by then; let
 * the loop's select() only look.  The bytes are sorted by time, so a wait
 * costs no more than the bytes it delivers.  A label with several bytes
 * due gets one: its callback reads all it finds, so one byte or 300 make
 * the same trace, and one always fits in the socket's buffer. */
static double trace_wait(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    t.ticks++;
    double now = loop_time(loop);
    bool any = t.next < t.npending;
    double earliest = any ? t.pending[t.next].when : 0;
    if (timeout < 0) {
        if (!any) { /* nothing can ever happen again: the scenario is over */
            loop_stop(loop);
            return 0;
        }
        if (earliest > now)
            now = earliest;
    } else {
        double deadline = now + timeout;
        if (any && earliest <= deadline) {
            if (earliest > now)
                now = earliest;
        } else {
            now = deadline;
        }
    }
    if (loop_set_time(loop, now) < 0)
        die("set_time", loop_error(loop));
    for (; t.next < t.npending && t.pending[t.next].when <= now; t.next++) {
        int io = t.pending[t.next].io;
        if (io < 0) { /* SIGUSR1, if a handler waits for it (SIG_DFL would end us) */
            struct sigaction sa;
            if (sigaction(SIGNAL, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL)
                raise(SIGNAL);
            continue;
        }
        if (t.written[io] != t.ticks) {
            t.written[io] = t.ticks;
            if (write(t.sockets[io][1], "x", 1) != 1)
                die("write", strerror(errno));
        }
    }
    if (t.ticks == TICK_LIMIT) {
        t.hit_limit = true;
        loop_stop(loop);
    }
    return 0;
}
/* @end wait */

/* Earlier bytes first (ties in any order: they are delivered together). */
static int by_time(const void *a, const void *b)
{
    const pending_t *x = a, *y = b;
    if (x->when != y->when)
        return x->when < y->when ? -1 : 1;
    return (x->io > y->io) - (x->io < y->io);
}

/* @region run_loop */
/* Run the loop until it stops (the scenario's `run` line, or the end of the
 * setup).  A KeyboardInterrupt that escapes is a line of the trace, and
 * the loop runs again, as a program's `while True: try: run_forever()
 * except KeyboardInterrupt: ...` would. */
static void run_loop(const action_t *line)
{
    while (!t.hit_limit) {
        /* The bytes and signals set up so far, by time (stably enough:
         * ties are delivered together). */
        qsort(t.pending + t.next, t.npending - t.next, sizeof *t.pending, by_time);
        if (loop_run_forever(t.loop) == 0)
            return;
        if (errno == EINTR) {
            printf("%.6f tick %ld run_forever raised %s\n", loop_time(t.loop), t.ticks,
                   loop_error(t.loop));
            continue;
        }
        if (line != NULL && loop_is_closed(t.loop)) {
            refused(line, loop_error(t.loop));
            return;
        }
        die("run_forever", loop_error(t.loop));
    }
}
/* @end run_loop */

/* Is name a backend of this build (loop_backends(): "epoll poll select"
 * on Linux)?  "" is: the platform's best. */
static bool has_backend(const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return true;
    for (const char *p = loop_backends(); *p != '\0'; p += strspn(p, " ")) {
        size_t k = strcspn(p, " ");
        if (k == n && strncmp(p, name, n) == 0)
            return true;
        p += k;
    }
    return false;
}

static int usage(void)
{
    fprintf(stderr, "usage: trace [--stage-info] [--backend=NAME] [--rules=miniloop] SCENARIO|-\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--stage-info") == 0) {
        printf("%d\n", STAGE);
        return 0;
    }
    /* --backend=NAME (chapter 07): run on that selector; the trace must not
     * change.  LOOP_BACKEND in the environment does the same. */
    const char *backend = NULL;
    if (argc >= 3 && strncmp(argv[1], "--backend=", 10) == 0) {
        backend = argv[1] + 10;
        argv++;
        argc--;
    }
    bool miniloop = argc == 3 && strcmp(argv[1], "--rules=miniloop") == 0;
    if (miniloop) {
        argv++;
        argc--;
    }
    if (argc != 2 || (argv[1][0] == '-' && argv[1][1] != '\0'))
        return usage();
    /* A backend this build does not have, named in either place, gets one
     * message and status 2 (loop_new_virtual() would only fail, EINVAL). */
    const char *names[] = {backend, getenv("LOOP_BACKEND")};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (names[i] != NULL && !has_backend(names[i])) {
            fprintf(stderr, "trace: no selector backend '%s' in this build (it has: %s)\n",
                    names[i], loop_backends());
            return 2;
        }
    }

    /* Read and parse it all before anything runs. */
    const char *path = argv[1], *name = path;
    char *text;
    size_t len = 0;
    if (strcmp(path, "-") == 0) {
        name = "<stdin>";
        text = scenario_read_file("/dev/stdin", &len);
    } else {
        text = scenario_read_file(path, &len);
    }
    if (text == NULL) {
        fprintf(stderr, "trace: cannot read '%s': %s\n", path, strerror(errno));
        return 2;
    }
    char *err;
    int rc = scenario_parse(text, len, name, STAGE, &t.scenario, &err);
    free(text);
    if (rc < 0) {
        fprintf(stderr, "%s\n", err ? err : "trace: out of memory");
        free(err);
        return 2;
    }

    /* Setup: the top-level lines, in file order. */
    size_t nio_lines = 0;
    for (const action_t *a = t.scenario.actions; a != NULL; a = a->next)
        nio_lines += a->kind == ACTION_IO || a->kind == ACTION_SIGNAL;
    t.sockets = calloc((size_t)t.scenario.nio + 1, sizeof *t.sockets);
    t.pending = calloc(nio_lines + 1, sizeof *t.pending);
    t.written = calloc((size_t)t.scenario.nio + 1, sizeof *t.written);
    t.recent = calloc((size_t)t.scenario.ncalls + 1, sizeof *t.recent);
    t.futures = calloc((size_t)t.scenario.ncalls + 1, sizeof *t.futures);
    if (t.sockets == NULL || t.pending == NULL || t.written == NULL || t.recent == NULL ||
        t.futures == NULL)
        die("setup", strerror(errno));
    t.loop = loop_new_virtual();
    if (t.loop == NULL)
        die("loop_new_virtual", strerror(errno));
    if (backend != NULL && loop_set_backend(t.loop, backend) < 0) {
        fprintf(stderr, "trace: %s\n", loop_error(t.loop));
        return 2;
    }
    loop_set_wait_hook(t.loop, trace_wait, NULL);
    loop_set_log(t.loop, stdout); /* the exception handler's output is trace */
    loop_set_namer(t.loop, namer);
    loop_set_exception_handler(t.loop, trace_handler, NULL);
    loop_set_task_factory(t.loop, task_factory, NULL);
    if (miniloop)
        loop_set_rules(t.loop, LOOP_RULES_MINILOOP);
    for (const action_t *a = t.scenario.actions; a != NULL; a = a->next)
        execute(a, NULL);

    if (!loop_is_closed(t.loop)) /* a scenario may close it itself */
        run_loop(NULL);
    if (t.hit_limit)
        printf("# stopped after %d ticks\n", TICK_LIMIT);
    t.over = true; /* what the releases below report is not trace */

    loop_close(t.loop);
    for (size_t i = 0; i < t.nkept; i++) /* every future and task, kept until now */
        future_release(t.kept[i]);
    free(t.kept);
    free(t.futures);
    loop_free(t.loop);
    for (long i = 0; i < t.scenario.ncalls; i++) /* kept handles outlive the loop */
        if (t.recent[i] != NULL)
            handle_release(t.recent[i]);
    free(t.recent);
    for (int i = 0; i < t.scenario.nio; i++) {
        close(t.sockets[i][0]);
        close(t.sockets[i][1]);
    }
    free(t.sockets);
    free(t.pending);
    free(t.written);
    scenario_free(&t.scenario);
    return fflush(stdout) == 0 ? 0 : 3;
}
