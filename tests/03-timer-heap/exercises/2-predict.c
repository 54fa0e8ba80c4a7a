/* Exercise 03.2 -- predict the trace.
 *
 * Passes when predictions.txt holds, under each "== NAME" line, exactly
 * the trace that chapter 03's loop prints for the scenario
 * code/03-timer-heap/exercises/2-predict/NAME.scn.
 *
 * The trace is made here, through the stage's library: the stage's own
 * scenario parser (scenario.c, compiled into this test) and a copy of the
 * trace program's driver, without io (the scenarios have none).  A first
 * test checks that this driver prints what CPython prints for the pinned
 * conformance scenarios, so that it is the trace program's twin.
 *
 * predictions.txt must have changed last before this test's program was
 * built: written by hand
 * before the build, not by code that runs in the test (a here.c that runs
 * the trace program and writes its output there passed: a cheat,
 * tests/grade/README.md).  Nothing stops a student from running the trace
 * program by hand and pasting its output; chapters/a4-teachers.md says to
 * set a prediction in class, on paper.
 *
 * Run from the top of the repository (make does):
 *   make exercise CH=03            (against your code/03-timer-heap/exercises/)
 *   make exercise CH=03 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "scenario.c" /* the stage's parser: it is not part of libloop.a */

#include "loop.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"

#define STAGE 3
#define TICK_LIMIT 100000
#define SCENARIOS "code/03-timer-heap/exercises/2-predict/"

const char *predict_here(void); /* here.c, in the exercise's folder */

static const char *program; /* argv[0]: this test's program */

/* ---- the driver: trace.c without io ---------------------------------------- */

static struct {
    loop_t *loop;
    long ticks;
    char out[1 << 16];
    size_t len;
} d;

static void execute(const action_t *a);

static void traced(loop_t *loop, void *arg)
{
    const action_t *a = arg;
    int n = snprintf(d.out + d.len, sizeof d.out - d.len, "%.6f tick %ld %s\n",
                     loop_time(loop), d.ticks, a->label);
    ck_assert_msg(n > 0 && (size_t)n < sizeof d.out - d.len, "trace too long");
    d.len += (size_t)n;
    for (const action_t *c = a->children; c != NULL; c = c->next)
        execute(c);
}

static void execute(const action_t *a)
{
    void *arg = (void *)a;
    switch (a->kind) {
    case ACTION_SOON:
        ck_assert_ptr_nonnull(loop_call_soon(d.loop, traced, arg));
        break;
    case ACTION_LATER:
        ck_assert_ptr_nonnull(loop_call_later(d.loop, a->number, traced, arg));
        break;
    case ACTION_AT:
        ck_assert_ptr_nonnull(loop_call_at(d.loop, a->number, traced, arg));
        break;
    case ACTION_STOP:
        loop_stop(d.loop);
        break;
    default:
        ck_abort_msg("line %ld: this driver runs soon, later, at and stop only", a->line);
    }
}

/* trace.c's trace_wait, with no io byte ever pending. */
static double wait_hook(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    d.ticks++;
    if (timeout < 0) { /* nothing can happen any more: the scenario is over */
        loop_stop(loop);
        return 0;
    }
    ck_assert_int_eq(loop_set_time(loop, loop_time(loop) + timeout), 0);
    if (d.ticks == TICK_LIMIT)
        loop_stop(loop);
    return 0;
}

/* Run the scenario file at path; the trace is left in d.out. */
static void run_scenario(const char *path)
{
    size_t len;
    char *text = scenario_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s: %s (run the test from the top of "
                  "the repository: make exercise CH=03)", path, strerror(errno));
    scenario_t s;
    char *err = NULL;
    int rc = scenario_parse(text, len, path, STAGE, &s, &err);
    free(text);
    ck_assert_msg(rc == 0, "%s", err ? err : "out of memory");
    d.loop = loop_new_virtual();
    ck_assert_ptr_nonnull(d.loop);
    d.ticks = 0;
    d.len = 0;
    d.out[0] = '\0';
    loop_set_wait_hook(d.loop, wait_hook, NULL);
    for (const action_t *a = s.actions; a != NULL; a = a->next)
        execute(a);
    ck_assert_int_eq(loop_run_forever(d.loop), 0);
    if (d.ticks == TICK_LIMIT)
        d.len += (size_t)snprintf(d.out + d.len, sizeof d.out - d.len,
                                  "# stopped after %d ticks\n", TICK_LIMIT);
    loop_close(d.loop);
    loop_free(d.loop);
    scenario_free(&s);
}

/* The whole file at path, NUL-terminated (malloc'ed). */
static char *slurp(const char *path)
{
    size_t len;
    char *text = scenario_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s: %s", path, strerror(errno));
    char *s = malloc(len + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, text, len);
    s[len] = '\0';
    free(text);
    return s;
}

/* ---- the driver is the trace program's twin -------------------------------- */

/* CPython's pinned traces of the conformance scenarios with timers only. */
static const char *const pinned[] = {
    "article000-6.1.4", "equal-deadlines", "negative-delays",  "rounding",
    "port-time-and-call-at", "port-timeout-rounding", "stop-top-level", "tick-bound",
};

START_TEST(driver_prints_cpythons_traces)
{
    char scn[256], trace[256];
    snprintf(scn, sizeof scn, "tests/conformance/scenarios/%s.scn", pinned[_i]);
    snprintf(trace, sizeof trace, "tests/conformance/scenarios/%s.trace", pinned[_i]);
    run_scenario(scn);
    char *want = slurp(trace);
    ck_assert_msg(strcmp(d.out, want) == 0, "%s: the driver printed\n%s\nCPython prints\n%s",
                  scn, d.out, want);
    free(want);
}
END_TEST

/* ---- the predictions ---------------------------------------------------------- */

static const char *const names[] = {"1-two-queues", "2-ties", "3-nested-and-far"};

/* The lines under "== name" in the predictions, blank and # lines left
 * out, trailing spaces cut, each ending in '\n'.  NULL if no such line. */
static char *prediction(const char *text, const char *name)
{
    char *out = NULL;
    size_t len = 0;
    bool in = false, found = false;
    for (const char *p = text; *p != '\0';) {
        const char *e = strchr(p, '\n');
        size_t full = e ? (size_t)(e - p) : strlen(p), n = full;
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
            n--;
        const char *q = p;
        size_t m = n;
        while (m > 0 && (*q == ' ' || *q == '\t'))
            q++, m--;
        if (m >= 2 && q[0] == '=' && q[1] == '=') {
            const char *h = q + 2;
            size_t hn = m - 2;
            while (hn > 0 && *h == ' ')
                h++, hn--;
            in = hn == strlen(name) && strncmp(h, name, hn) == 0;
            found = found || in;
        } else if (in && m > 0 && q[0] != '#') {
            out = realloc(out, len + m + 2);
            ck_assert_ptr_nonnull(out);
            memcpy(out + len, q, m);
            len += m;
            out[len++] = '\n';
            out[len] = '\0';
        }
        p = e ? e + 1 : p + full;
    }
    if (found && out == NULL)
        out = calloc(1, 1);
    return out;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

START_TEST(prediction_matches_the_loop)
{
    const char *name = names[_i];
    char path[512];
    const char *here = predict_here();
    const char *slash = strrchr(here, '/');
    int dirlen = slash ? (int)(slash - here) : 1;
    snprintf(path, sizeof path, "%.*s/predictions.txt", dirlen, slash ? here : ".");
    /* Written before the build, by hand: not by this run.  The time of the
     * last change (st_ctim), which no one can set back (utimensat sets
     * st_mtim, and changes st_ctim to now). */
    struct stat ps, es;
    if (program != NULL && stat(program, &es) == 0 && stat(path, &ps) == 0 &&
        (ps.st_ctim.tv_sec > es.st_ctim.tv_sec ||
         (ps.st_ctim.tv_sec == es.st_ctim.tv_sec && ps.st_ctim.tv_nsec > es.st_ctim.tv_nsec)))
        ck_abort_msg("%s is newer than the test's program %s: it was written while the "
                     "test ran, not by you.  Write your predictions, then run "
                     "make exercise CH=03", path, program);
    char *text = slurp(path);
    char *mine = prediction(text, name);
    free(text);
    ck_assert_msg(mine != NULL, "%s has no line '== %s'", path, name);

    char scn[256];
    snprintf(scn, sizeof scn, SCENARIOS "%s.scn", name);
    run_scenario(scn);

    int want_lines = count_lines(d.out), my_lines = count_lines(mine);
    if (my_lines == 0) {
        free(mine);
        ck_abort_msg("%s: no prediction yet (under '== %s' in %s)", name, name, path);
    }
    /* The first line that differs, without giving the loop's line away. */
    const char *a = mine, *b = d.out;
    for (int line = 1; *a != '\0' && *b != '\0'; line++) {
        size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");
        if (na != nb || strncmp(a, b, na) != 0) {
            char buf[160];
            snprintf(buf, sizeof buf, "%.*s", (int)na, a);
            free(mine);
            ck_abort_msg("%s, line %d: you predicted\n    %s\nand the loop prints something "
                         "else there.  (%d lines right before it.)", name, line, buf, line - 1);
        }
        a += na + 1;
        b += nb + 1;
    }
    free(mine);
    ck_assert_msg(my_lines == want_lines, "%s: the first %d lines are right, but the loop "
                  "prints %d lines, not %d", name, my_lines < want_lines ? my_lines : want_lines,
                  want_lines, my_lines);
}
END_TEST

int main(int argc, char **argv)
{
    program = argc > 0 ? argv[0] : NULL;
    Suite *s = suite_create("exercise 03.2: predict the trace");
    TCase *tc = tcase_create("predict");
    tcase_set_timeout(tc, 60); /* tick-bound.scn makes 100000 ticks */
    tcase_add_loop_test(tc, driver_prints_cpythons_traces, 0,
                        (int)(sizeof pinned / sizeof pinned[0]));
    tcase_add_loop_test(tc, prediction_matches_the_loop, 0,
                        (int)(sizeof names / sizeof names[0]));
    suite_add_tcase(s, tc);
    return run_suite(s);
}
