/* Exercise 04.3 -- predict the trace, under both rule sets.
 *
 * Passes when code/04-snapshot/exercises/3-predict/predict.c holds, line for
 * line, the traces the stage's trace program prints for
 * tests/04-snapshot/exercises/3-predict.scn: under asyncio's rules and under
 * article 000's MiniLoop rules (--rules=miniloop).  On a mismatch it names
 * the first line that differs.
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
#define SCENARIO "tests/04-snapshot/exercises/3-predict.scn"

extern const char *const predicted_asyncio;
extern const char *const predicted_miniloop;

/* Compare line by line; fail at the first line that differs. */
static void compare(const char *rules, const char *predicted, const char *actual)
{
    int line = 1;
    for (;;) {
        size_t p = strcspn(predicted, "\n"), a = strcspn(actual, "\n");
        if (p == 0 && *predicted == '\0' && a == 0 && *actual == '\0')
            return;
        ck_assert_msg(p == a && strncmp(predicted, actual, p) == 0 &&
                      predicted[p] == actual[a],
                      "%s rules, line %d: you predicted \"%.*s\", the trace is \"%.*s\"%s",
                      rules, line, (int)p, predicted, (int)a, actual,
                      *predicted == '\0' ? " (your prediction ended here)" :
                      *actual == '\0' ? " (the trace ended here)" : "");
        predicted += p + (predicted[p] == '\n');
        actual += a + (actual[a] == '\n');
        line++;
    }
}

START_TEST(test_asyncio_rules)
{
    char out[8192];
    ck_assert_int_eq(run_trace(STAGE, SCENARIO, false, out, sizeof out), 0);
    compare("asyncio's", predicted_asyncio, out);
}
END_TEST

START_TEST(test_miniloop_rules)
{
    char out[8192];
    ck_assert_int_eq(run_trace(STAGE, SCENARIO, true, out, sizeof out), 0);
    compare("MiniLoop's", predicted_miniloop, out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 04.3: predict the trace");
    TCase *tc = tcase_create("predict");
    tcase_add_test(tc, test_asyncio_rules);
    tcase_add_test(tc, test_miniloop_rules);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
