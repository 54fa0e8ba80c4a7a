/* check_main.h -- the end of every Check test program.
 *
 *     int main(void) { return run_suite(my_suite()); }
 *
 * runs every test of the suite (each in its own child process, unless
 * CK_FORK=no), prints Check's report, and exits 0 when all of them passed,
 * 1 otherwise. */
#ifndef TESTS_SUPPORT_CHECK_MAIN_H
#define TESTS_SUPPORT_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
