/* Exercise 1 (chapter 08): give a signal back as it was found.
 *
 * asyncio's remove_signal_handler() (and close()) set the signal to
 * SIG_DFL, whatever it was before add_signal_handler(): a program that
 * ignored SIGPIPE or SIGHUP, then lent it to a loop for a while, finds it
 * deadly afterwards.  Make loop_remove_signal_handler() and loop_close()
 * restore the disposition the signal had before the loop's first handler
 * for it: SIG_IGN stays ignored, a program's own C handler comes back, a
 * default stays default; replacing the loop's handler keeps the first
 * saved disposition, not the loop's own.
 *
 * "Before the loop's first handler" means each time the signal is lent:
 * a disposition read once, the first time the process lends it, passes the
 * first three tests (each lends its signal once), so the fourth lends
 * SIGUSR1 three times, the program changing its mind in between.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <signal.h>
#include <string.h>

#include "check_main.h"

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

static volatile sig_atomic_t own_calls;
static void own_handler(int sig)
{
    (void)sig;
    own_calls++;
}

static void (*disposition(int sig))(int)
{
    struct sigaction sa;
    ck_assert_int_eq(sigaction(sig, NULL, &sa), 0);
    return sa.sa_handler;
}

static void set(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(sig, &sa, NULL), 0);
}

START_TEST(ignored_stays_ignored)
{
    set(SIGUSR1, SIG_IGN);
    loop_t *loop = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, NULL), 0);
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, NULL), 0); /* replaced */
    ck_assert_int_eq(loop_remove_signal_handler(loop, SIGUSR1), 1);
    ck_assert_ptr_eq((void *)disposition(SIGUSR1), (void *)SIG_IGN);
    loop_close(loop);
    loop_free(loop);
    set(SIGUSR1, SIG_DFL);
}
END_TEST

START_TEST(own_handler_comes_back_at_close)
{
    set(SIGUSR2, own_handler);
    loop_t *loop = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR2, note, NULL), 0);
    ck_assert_ptr_ne((void *)disposition(SIGUSR2), (void *)own_handler);
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert_ptr_eq((void *)disposition(SIGUSR2), (void *)own_handler);
    raise(SIGUSR2);
    ck_assert_int_eq(own_calls, 1);
    loop_free(loop);
    set(SIGUSR2, SIG_DFL);
}
END_TEST

START_TEST(default_stays_default)
{
    set(SIGHUP, SIG_DFL);
    loop_t *loop = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGHUP, note, NULL), 0);
    ck_assert_int_eq(loop_remove_signal_handler(loop, SIGHUP), 1);
    ck_assert_ptr_eq((void *)disposition(SIGHUP), (void *)SIG_DFL);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

START_TEST(lent_again_after_the_program_changed_it)
{
    set(SIGUSR1, SIG_IGN);
    loop_t *loop = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, NULL), 0);
    ck_assert_int_eq(loop_remove_signal_handler(loop, SIGUSR1), 1);
    ck_assert_ptr_eq((void *)disposition(SIGUSR1), (void *)SIG_IGN);
    set(SIGUSR1, own_handler); /* the program changes its mind */
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, NULL), 0);
    ck_assert_int_eq(loop_remove_signal_handler(loop, SIGUSR1), 1);
    ck_assert_msg(disposition(SIGUSR1) == own_handler,
                  "SIGUSR1 was lent again after the program set its own handler: remove "
                  "must give back that handler, not what SIGUSR1 was the first time");
    set(SIGUSR1, SIG_DFL);
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, NULL), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert_ptr_eq((void *)disposition(SIGUSR1), (void *)SIG_DFL);
    loop_free(loop);
}
END_TEST

static Suite *exercise_suite(void)
{
    Suite *s = suite_create("08/1-restore-disposition");
    TCase *tc = tcase_create("restore");
    tcase_add_test(tc, ignored_stays_ignored);
    tcase_add_test(tc, own_handler_comes_back_at_close);
    tcase_add_test(tc, default_stays_default);
    tcase_add_test(tc, lent_again_after_the_program_changed_it);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(exercise_suite());
}
