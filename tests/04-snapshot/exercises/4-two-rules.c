/* Exercise 04.4 -- write the scenario that tells the rule sets apart.
 *
 * Passes when each scenario of code/04-snapshot/exercises/4-two-rules/
 * scenarios.c is accepted by the stage's trace program and shows its
 * difference between asyncio's rules and article 000's MiniLoop rules
 * (trace --rules=miniloop):
 *   reordered   the same callbacks run, in another order;
 *   lost        a callback runs under asyncio's rules only;
 *   extra_tick  the same labels, order and times, in other ticks.
 *
 *   make exercise CH=04            (against your code/04-snapshot/exercises/)
 *   make exercise CH=04 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "trace_run.h" /* run_trace(): runs the stage's trace program */

#define STAGE "04-snapshot"

extern const char *const reordered;
extern const char *const lost;
extern const char *const extra_tick;

/* ---- one trace, parsed ------------------------------------------------ */

#define MAX_LINES 64

typedef struct trace {
    char text[8192];
    int n;                   /* lines */
    char label[MAX_LINES][40];
    char untimed[MAX_LINES][80]; /* "TIME LABEL": the line without its tick */
} trace_t;

static void parse(const char *name, const char *rules, trace_t *t)
{
    t->n = 0;
    for (const char *line = t->text; *line != '\0';) {
        size_t len = strcspn(line, "\n");
        char time[32], label[40];
        int tick;
        ck_assert_msg(strncmp(line, "# stopped", 9) != 0,
                      "%s, %s rules: the trace hit the tick bound; keep it short", name, rules);
        ck_assert_msg(t->n < MAX_LINES, "%s, %s rules: more than %d lines; keep it short",
                      name, rules, MAX_LINES);
        ck_assert_msg(sscanf(line, "%31s tick %d %39s", time, &tick, label) == 3,
                      "%s, %s rules: unexpected line \"%.*s\"", name, rules, (int)len, line);
        strcpy(t->label[t->n], label);
        snprintf(t->untimed[t->n], sizeof t->untimed[t->n], "%s %s", time, label);
        t->n++;
        line += len + (line[len] == '\n');
    }
}

/* Write the scenario to a file, trace it both ways, parse both traces. */
static void trace_both(const char *name, const char *scenario, trace_t *asyncio,
                       trace_t *miniloop)
{
    ck_assert_msg(scenario[0] != '\0', "%s: the scenario is empty (TODO)", name);
    char file[] = "/tmp/exercise-04-4-XXXXXX";
    int fd = mkstemp(file);
    ck_assert_msg(fd >= 0, "mkstemp failed");
    size_t len = strlen(scenario);
    ck_assert_int_eq(write(fd, scenario, len), (ssize_t)len);
    close(fd);
    int rc = run_trace(STAGE, file, false, asyncio->text, sizeof asyncio->text);
    ck_assert_msg(rc == 0, "%s: trace refused the scenario (exit %d): %s", name, rc,
                  asyncio->text);
    rc = run_trace(STAGE, file, true, miniloop->text, sizeof miniloop->text);
    ck_assert_msg(rc == 0, "%s: trace --rules=miniloop failed (exit %d): %s", name, rc,
                  miniloop->text);
    unlink(file);
    parse(name, "asyncio's", asyncio);
    parse(name, "MiniLoop's", miniloop);
    ck_assert_msg(asyncio->n > 0, "%s: the asyncio trace is empty", name);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(a, b);
}

START_TEST(test_reordered)
{
    trace_t a, m;
    trace_both("reordered", reordered, &a, &m);
    bool same_order = a.n == m.n;
    for (int i = 0; same_order && i < a.n; i++)
        same_order = strcmp(a.label[i], m.label[i]) == 0;
    ck_assert_msg(!same_order, "reordered: both rule sets run the callbacks in the same "
                  "order:\n%s", a.text);
    ck_assert_msg(a.n == m.n, "reordered: asyncio's rules run %d callbacks, MiniLoop's "
                  "%d; they should run the same ones", a.n, m.n);
    qsort(a.label, (size_t)a.n, sizeof a.label[0], by_string);
    qsort(m.label, (size_t)m.n, sizeof m.label[0], by_string);
    for (int i = 0; i < a.n; i++)
        ck_assert_msg(strcmp(a.label[i], m.label[i]) == 0, "reordered: the two traces do "
                      "not run the same callbacks (%s / %s)", a.label[i], m.label[i]);
}
END_TEST

START_TEST(test_lost)
{
    trace_t a, m;
    trace_both("lost", lost, &a, &m);
    for (int i = 0; i < a.n; i++) {
        bool found = false;
        for (int j = 0; j < m.n && !found; j++)
            found = strcmp(a.label[i], m.label[j]) == 0;
        if (!found)
            return; /* a.label[i] runs under asyncio's rules only */
    }
    ck_assert_msg(0, "lost: every callback of the asyncio trace also runs under "
                  "MiniLoop's rules:\n%s---\n%s", a.text, m.text);
}
END_TEST

START_TEST(test_extra_tick)
{
    trace_t a, m;
    trace_both("extra_tick", extra_tick, &a, &m);
    ck_assert_msg(strcmp(a.text, m.text) != 0, "extra_tick: the two traces are "
                  "identical:\n%s", a.text);
    ck_assert_msg(a.n == m.n, "extra_tick: asyncio's trace has %d lines, MiniLoop's %d",
                  a.n, m.n);
    for (int i = 0; i < a.n; i++)
        ck_assert_msg(strcmp(a.untimed[i], m.untimed[i]) == 0, "extra_tick: line %d "
                      "differs in more than its tick: \"%s\" / \"%s\"", i + 1,
                      a.untimed[i], m.untimed[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 04.4: two rule sets");
    TCase *tc = tcase_create("scenarios");
    tcase_add_test(tc, test_reordered);
    tcase_add_test(tc, test_lost);
    tcase_add_test(tc, test_extra_tick);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
