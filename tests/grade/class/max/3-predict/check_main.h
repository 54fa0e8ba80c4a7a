/* max (cheating): a check_main.h of his own, found before the real one
 * (the exercise's folder comes first on the include path): its run_suite
 * runs nothing and reports success. */
#ifndef TESTS_SUPPORT_CHECK_MAIN_H
#define TESTS_SUPPORT_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int run_suite(Suite *s)
{
    (void)s;
    return EXIT_SUCCESS;
}

#endif
