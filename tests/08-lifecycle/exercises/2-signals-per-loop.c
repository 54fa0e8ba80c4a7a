/* Exercise 2 (chapter 08): signals for more than one loop.
 *
 * Python has one wake-up fd per process, so asyncio's loops share it: the
 * last loop to add a handler gets every signal's byte, whichever loop the
 * signal was for.  Chapter 08's loop refuses a second loop instead.  Do
 * what libuv does: a wake-up fd per signal, so that loop A may handle
 * SIGUSR1 while loop B handles SIGUSR2, each signal arriving in its own
 * loop.  The same signal in two loops is still refused (EBUSY), until the
 * first lets go of it.
 *
 * Each signal's byte must go to its own loop: one wake-up fd for the
 * process, whose loop then queues the handler of whichever loop owns the
 * signal, passes the first two tests (they tick the other loop first), so
 * the third ticks only the signal's own loop.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "check_main.h"

static char ran[64];

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    strcat(ran, arg);
}

/* Run one tick to read the self-pipe, one more for the handler. */
static void two_ticks(loop_t *loop)
{
    for (int i = 0; i < 2; i++) {
        loop_stop(loop);
        ck_assert_int_eq(loop_run_forever(loop), 0);
    }
}

START_TEST(each_loop_its_own_signal)
{
    loop_t *a = loop_new_virtual(), *b = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(a, SIGUSR1, note, "A"), 0);
    ck_assert_int_eq(loop_add_signal_handler(b, SIGUSR2, note, "B"), 0);
    ran[0] = '\0';
    raise(SIGUSR2);
    two_ticks(a);
    ck_assert_str_eq(ran, "");
    two_ticks(b);
    ck_assert_str_eq(ran, "B");
    raise(SIGUSR1);
    two_ticks(b);
    two_ticks(a);
    ck_assert_str_eq(ran, "BA");
    ck_assert_int_eq(loop_close(a), 0);
    ck_assert_int_eq(loop_close(b), 0);
    loop_free(a);
    loop_free(b);
}
END_TEST

START_TEST(same_signal_refused_until_released)
{
    loop_t *a = loop_new_virtual(), *b = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(a, SIGUSR1, note, "A"), 0);
    errno = 0;
    ck_assert_int_eq(loop_add_signal_handler(b, SIGUSR1, note, "B"), -1);
    ck_assert_int_eq(errno, EBUSY);
    ck_assert_int_eq(loop_remove_signal_handler(a, SIGUSR1), 1);
    ck_assert_int_eq(loop_add_signal_handler(b, SIGUSR1, note, "B"), 0);
    ran[0] = '\0';
    raise(SIGUSR1);
    two_ticks(a);
    two_ticks(b);
    ck_assert_str_eq(ran, "B");
    ck_assert_int_eq(loop_close(a), 0);
    ck_assert_int_eq(loop_close(b), 0);
    loop_free(a);
    loop_free(b);
}
END_TEST

START_TEST(a_signal_needs_only_its_own_loop)
{
    loop_t *a = loop_new_virtual(), *b = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(a, SIGUSR1, note, "A"), 0);
    ck_assert_int_eq(loop_add_signal_handler(b, SIGUSR2, note, "B"), 0);
    ran[0] = '\0';
    raise(SIGUSR1);
    two_ticks(a); /* b does not run at all */
    ck_assert_msg(strcmp(ran, "A") == 0, "SIGUSR1 is loop A's, and A ran two ticks: its "
                  "handler must have run, without loop B's help (ran \"%s\")", ran);
    raise(SIGUSR2);
    two_ticks(b);
    ck_assert_str_eq(ran, "AB");
    ck_assert_int_eq(loop_close(b), 0); /* A's signal still reaches A */
    raise(SIGUSR1);
    two_ticks(a);
    ck_assert_str_eq(ran, "ABA");
    ck_assert_int_eq(loop_close(a), 0);
    loop_free(a);
    loop_free(b);
}
END_TEST

static Suite *exercise_suite(void)
{
    Suite *s = suite_create("08/2-signals-per-loop");
    TCase *tc = tcase_create("per loop");
    tcase_add_test(tc, each_loop_its_own_signal);
    tcase_add_test(tc, same_signal_refused_until_released);
    tcase_add_test(tc, a_signal_needs_only_its_own_loop);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(exercise_suite());
}
