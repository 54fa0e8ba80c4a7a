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
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STAGE 9
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
    printf("%.6f tick %ld %s\n", loop_time(t.loop), t.ticks, label);
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
                                  "sighandler", "sigremove", "signal"};
    return names[a->kind];
}

/* A call the loop refused (chapter 08: after close, or run inside a
 * callback): a line of the trace, as the Python runner prints
 * RuntimeError's words. */
static void refused(const action_t *a, const char *why)
{
    printf("%.6f tick %ld %s%s%s refused: %s\n", loop_time(t.loop), t.ticks, verb(a),
           a->label[0] != '\0' ? " " : "", a->label, why);
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
    printf("%.6f tick %ld handler: %s", loop_time(loop), t.ticks, c->message);
    if (c->exception != NULL)
        printf(" (%s: %s)", c->exception->type, c->exception->message);
    printf("\n");
    if (failing != NULL)
        loop_raise(loop, "RuntimeError", "handler failed");
}

/* How the loop names the trace's callbacks: LABEL(), as CPython names the
 * Python runner's callable objects. */
static void namer(loop_callback callback, void *arg, char *buf, size_t size)
{
    (void)callback;
    const action_t *a = arg;
    snprintf(buf, size, "%s()", a != NULL ? a->label : "None");
}
/* @end handlers */

static void run_loop(const action_t *line);

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
    case ACTION_CANCEL: { /* the most recent handle of the label, if any */
        handle_t *h = t.recent[a->call];
        if (h != NULL)
            handle_cancel(h);
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
    case ACTION_HANDLER:
        if (a->handler == HANDLER_DEFAULT)
            loop_set_exception_handler(t.loop, NULL, NULL);
        else
            loop_set_exception_handler(t.loop, custom_handler,
                                       a->handler == HANDLER_FAILING ? (void *)a : NULL);
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
    }
    return false;
}
/* @end execute */

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
    if (t.sockets == NULL || t.pending == NULL || t.written == NULL || t.recent == NULL)
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
    if (miniloop)
        loop_set_rules(t.loop, LOOP_RULES_MINILOOP);
    for (const action_t *a = t.scenario.actions; a != NULL; a = a->next)
        execute(a, NULL);

    if (!loop_is_closed(t.loop)) /* a scenario may close it itself */
        run_loop(NULL);
    if (t.hit_limit)
        printf("# stopped after %d ticks\n", TICK_LIMIT);

    loop_close(t.loop);
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
