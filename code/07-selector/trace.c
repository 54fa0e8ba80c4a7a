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
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STAGE 7
#define TICK_LIMIT 100000

/* The most recent handle a soon / later / at / threadsafe line scheduled, KEPT
 * (handle_retain): `cancel LABEL` may come after its callback ran. */
typedef struct recent {
    const char *label;
    handle_t *handle;
} recent_t;

/* One byte that arrives on an io label's socket at a virtual time. */
typedef struct pending {
    double when;
    int io;
} pending_t;

static struct {
    loop_t *loop;
    scenario_t scenario;
    int (*sockets)[2]; /* per io label: [0] read end (watched), [1] write end */
    pending_t *pending; /* io bytes not yet delivered, in file order */
    size_t npending;
    long ticks;         /* waits so far: the tick number of the trace */
    bool hit_limit;
    recent_t *recent;   /* per soon/later/at/threadsafe line: its most recent handle */
    size_t nrecent;
} t;

static void die(const char *what)
{
    fprintf(stderr, "trace: %s: %s\n", what, t.loop ? loop_error(t.loop) : strerror(errno));
    exit(3);
}

static void execute(const action_t *a);

/* @region callbacks */
static void run_children(const action_t *a)
{
    for (const action_t *c = a->children; c != NULL; c = c->next)
        execute(c);
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
/* The slot of a label (labels of soon / later / at lines are unique), or
 * NULL if that line has not scheduled anything yet.  A linear search: a
 * scenario has few lines. */
static recent_t *recent_slot(const char *label)
{
    for (size_t i = 0; i < t.nrecent; i++)
        if (strcmp(t.recent[i].label, label) == 0)
            return &t.recent[i];
    return NULL;
}

/* Keep the handle a line just scheduled; let go of the one it replaces. */
static void remember(const action_t *a, handle_t *handle)
{
    if (handle == NULL)
        die(a->kind == ACTION_SOON ? "call_soon" : a->kind == ACTION_LATER ? "call_later"
            : a->kind == ACTION_AT ? "call_at" : "call_soon_threadsafe");
    handle_retain(handle);
    recent_t *slot = recent_slot(a->label);
    if (slot == NULL) { /* t.recent has room for every line (main) */
        slot = &t.recent[t.nrecent++];
        slot->label = a->label;
    } else {
        handle_release(slot->handle);
    }
    slot->handle = handle;
}
/* @end recent */

/* @region execute */
static void execute(const action_t *a)
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
        recent_t *slot = recent_slot(a->label);
        if (slot != NULL)
            handle_cancel(slot->handle);
        break;
    }
    case ACTION_STOP:
        loop_stop(t.loop);
        break;
    case ACTION_IO: /* top level only: at setup */
        if (t.scenario.io[a->io] == a) {
            int *sv = t.sockets[a->io];
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
                die("socketpair");
            fcntl(sv[0], F_SETFL, O_NONBLOCK);
            fcntl(sv[1], F_SETFL, O_NONBLOCK);
            if (loop_add_reader(t.loop, sv[0], io_cb, (void *)a) < 0)
                die("add_reader");
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
    }
}
/* @end execute */

/* @region wait */
/* The harness's selector: the loop asks to wait `timeout` seconds (-1:
 * until an fd is ready).  Jump the clock to the end of the wait, or to the
 * first io byte that arrives before it; deliver the bytes due by then; let
 * the loop's select() only look. */
static double trace_wait(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    t.ticks++;
    double now = loop_time(loop);
    bool any = t.npending > 0;
    double earliest = 0;
    for (size_t i = 0; i < t.npending; i++)
        if (i == 0 || t.pending[i].when < earliest)
            earliest = t.pending[i].when;
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
        die("set_time");
    size_t kept = 0;
    for (size_t i = 0; i < t.npending; i++) {
        if (t.pending[i].when <= now) {
            if (write(t.sockets[t.pending[i].io][1], "x", 1) != 1)
                die("write");
        } else {
            t.pending[kept++] = t.pending[i];
        }
    }
    t.npending = kept;
    if (t.ticks == TICK_LIMIT) {
        t.hit_limit = true;
        loop_stop(loop);
    }
    return 0;
}
/* @end wait */

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
    size_t nio_lines = 0, ncalls = 0;
    for (const action_t *a = t.scenario.actions; a != NULL; a = a->next)
        nio_lines += a->kind == ACTION_IO;
    for (const action_t *a = t.scenario.all; a != NULL; a = a->all_next)
        ncalls += a->kind == ACTION_SOON || a->kind == ACTION_LATER || a->kind == ACTION_AT ||
                  a->kind == ACTION_THREADSAFE;
    t.sockets = calloc((size_t)t.scenario.nio + 1, sizeof *t.sockets);
    t.pending = calloc(nio_lines + 1, sizeof *t.pending);
    t.recent = calloc(ncalls + 1, sizeof *t.recent);
    t.loop = loop_new_virtual();
    if (t.sockets == NULL || t.pending == NULL || t.recent == NULL || t.loop == NULL)
        die("setup");
    if (backend != NULL && loop_set_backend(t.loop, backend) < 0) {
        fprintf(stderr, "trace: %s\n", loop_error(t.loop));
        return 2;
    }
    loop_set_wait_hook(t.loop, trace_wait, NULL);
    if (miniloop)
        loop_set_rules(t.loop, LOOP_RULES_MINILOOP);
    for (const action_t *a = t.scenario.actions; a != NULL; a = a->next)
        execute(a);

    if (loop_run_forever(t.loop) < 0)
        die("run_forever");
    if (t.hit_limit)
        printf("# stopped after %d ticks\n", TICK_LIMIT);

    loop_close(t.loop);
    loop_free(t.loop);
    for (size_t i = 0; i < t.nrecent; i++) /* kept handles outlive the loop */
        handle_release(t.recent[i].handle);
    free(t.recent);
    for (int i = 0; i < t.scenario.nio; i++) {
        close(t.sockets[i][0]);
        close(t.sockets[i][1]);
    }
    free(t.sockets);
    free(t.pending);
    scenario_free(&t.scenario);
    return fflush(stdout) == 0 ? 0 : 3;
}
