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
#include <sys/wait.h>
#include <unistd.h>

#define SCENARIO "tests/04-snapshot/exercises/3-predict.scn"

extern const char *const predicted_asyncio;
extern const char *const predicted_miniloop;

/* ---- running the stage's trace program -------------------------------- */

/* build/04-snapshot/trace, found from this test's own path:
 * BUILD/exercises/04-snapshot/KIND/NAME -> BUILD/04-snapshot/trace, so that
 * the sanitizer build's test runs the sanitizer build's trace.  The
 * environment variable TRACE overrides it. */
static const char *trace_program(void)
{
    static char path[2100];
    const char *env = getenv("TRACE");
    if (env != NULL)
        return env;
    char exe[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_msg(n > 0, "cannot read /proc/self/exe; set TRACE=path/to/trace");
    exe[n] = '\0';
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(exe, '/');
        ck_assert_msg(slash != NULL, "unexpected test path; set TRACE=path/to/trace");
        *slash = '\0';
    }
    snprintf(path, sizeof path, "%s/04-snapshot/trace", exe);
    ck_assert_msg(access(path, X_OK) == 0, "no trace program at %s: build the stage "
                  "first (make -C code/04-snapshot), or set TRACE", path);
    return path;
}

/* Run `trace [--rules=miniloop] FILE` and return its exit status; its
 * standard output (and error) is left in `out`. */
static int run_trace(const char *file, bool miniloop, char *out, size_t cap)
{
    char cmd[4608];
    snprintf(cmd, sizeof cmd, "'%s' %s'%s' 2>&1", trace_program(),
             miniloop ? "--rules=miniloop " : "", file);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run %s", cmd);
    size_t len = fread(out, 1, cap - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

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
    ck_assert_int_eq(run_trace(SCENARIO, false, out, sizeof out), 0);
    compare("asyncio's", predicted_asyncio, out);
}
END_TEST

START_TEST(test_miniloop_rules)
{
    char out[8192];
    ck_assert_int_eq(run_trace(SCENARIO, true, out, sizeof out), 0);
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
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
