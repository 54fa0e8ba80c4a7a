/* trace.c -- run a scenario on the virtual clock and print its trace.
 *
 *     trace SCENARIO         (SCENARIO may be '-' for stdin)
 *     trace --stage-info     print this stage's number (for cpython_trace.py --stage N)
 *
 * The scenario language and the trace format are the book's appendix C;
 * tests/conformance/cpython_trace.py runs the same scenario on CPython's
 * own asyncio loop, and the two traces must be equal, byte for byte.
 *
 * Each callback prints "TIME tick N LABEL" and then runs the actions
 * nested under its line.  Time moves only in the wait hook, trace_wait():
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

#define STAGE 3
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

/* @region execute */
static void execute(const action_t *a)
{
    switch (a->kind) {
    case ACTION_SOON:
        if (loop_call_soon(t.loop, timer_cb, (void *)a) == NULL)
            die("call_soon", loop_error(t.loop));
        break;
    case ACTION_LATER:
        if (loop_call_later(t.loop, a->number, timer_cb, (void *)a) == NULL)
            die("call_later", loop_error(t.loop));
        break;
    case ACTION_AT:
        if (loop_call_at(t.loop, a->number, timer_cb, (void *)a) == NULL)
            die("call_at", loop_error(t.loop));
        break;
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
    case ACTION_CANCEL:     /* stage 05 on: refused by the parser */
    case ACTION_THREADSAFE: /* stage 06 on: refused by the parser */
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

static int usage(void)
{
    fprintf(stderr, "usage: trace [--stage-info] SCENARIO|-\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--stage-info") == 0) {
        printf("%d\n", STAGE);
        return 0;
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
    size_t nio_lines = 0;
    for (const action_t *a = t.scenario.actions; a != NULL; a = a->next)
        nio_lines += a->kind == ACTION_IO;
    t.sockets = calloc((size_t)t.scenario.nio + 1, sizeof *t.sockets);
    t.pending = calloc(nio_lines + 1, sizeof *t.pending);
    t.written = calloc((size_t)t.scenario.nio + 1, sizeof *t.written);
    if (t.sockets == NULL || t.pending == NULL || t.written == NULL)
        die("setup", strerror(errno));
    t.loop = loop_new_virtual();
    if (t.loop == NULL)
        die("loop_new_virtual", strerror(errno));
    loop_set_wait_hook(t.loop, trace_wait, NULL);
    for (const action_t *a = t.scenario.actions; a != NULL; a = a->next)
        execute(a);
    qsort(t.pending, t.npending, sizeof *t.pending, by_time);

    if (loop_run_forever(t.loop) < 0)
        die("run_forever", loop_error(t.loop));
    if (t.hit_limit)
        printf("# stopped after %d ticks\n", TICK_LIMIT);

    loop_close(t.loop);
    loop_free(t.loop);
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
