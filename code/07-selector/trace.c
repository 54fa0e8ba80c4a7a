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

/* One byte that arrives on an io label's socket at a virtual time. */
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
/* Keep the handle a line just scheduled; let go of the one it replaces.
 * Its slot is at the line's rank among the calls, which the parser gives
 * each call line and each cancel line (that of the line it names): no
 * search, however long the scenario. */
static void remember(const action_t *a, handle_t *handle)
{
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
            if (loop_add_reader(t.loop, sv[0], io_cb, (void *)a) < 0)
                die("add_reader", loop_error(t.loop));
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
        nio_lines += a->kind == ACTION_IO;
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
    if (miniloop)
        loop_set_rules(t.loop, LOOP_RULES_MINILOOP);
    for (const action_t *a = t.scenario.actions; a != NULL; a = a->next)
        execute(a);
    qsort(t.pending, t.npending, sizeof *t.pending, by_time);

    if (loop_run_forever(t.loop) < 0)
        die("run_forever", loop_error(t.loop));
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
