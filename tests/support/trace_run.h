/* trace_run.h -- running a stage's trace program from a test:
 *
 *     char out[8192];
 *     int status = run_trace("04-snapshot", "x.scn", false, out, sizeof out);
 *
 * runs `trace [--rules=miniloop] x.scn` and leaves its standard output and
 * error in out.  The program is BUILD/STAGE/trace, found from the test's own
 * path (BUILD/exercises/STAGE/KIND/NAME), so that the sanitizer build's test
 * runs the sanitizer build's trace; the environment variable TRACE
 * overrides it. */
#ifndef TESTS_SUPPORT_TRACE_RUN_H
#define TESTS_SUPPORT_TRACE_RUN_H

/* popen() and readlink() are POSIX: define _POSIX_C_SOURCE first. */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#error "define _POSIX_C_SOURCE 200809L before any #include to use trace_run.h"
#endif

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static inline const char *trace_program(const char *stage)
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
    snprintf(path, sizeof path, "%s/%s/trace", exe, stage);
    ck_assert_msg(access(path, X_OK) == 0, "no trace program at %s: build the stage "
                  "first (make -C code/%s), or set TRACE", path, stage);
    return path;
}

/* Run `trace [--rules=miniloop] FILE` of the stage and return its exit
 * status (-1 if it did not exit); its output is left in `out`. */
static inline int run_trace(const char *stage, const char *file, bool miniloop,
                            char *out, size_t cap)
{
    char cmd[4608];
    snprintf(cmd, sizeof cmd, "'%s' %s'%s' 2>&1", trace_program(stage),
             miniloop ? "--rules=miniloop " : "", file);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run %s", cmd);
    size_t len = fread(out, 1, cap - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
