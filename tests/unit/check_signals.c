/* check_signals.c -- signal handlers through the self-pipe (chapter 08).
 *
 * Written against chapter 08's loop.h and run against every later stage:
 *   - a signal arrives while the loop sleeps on a one-day timer (real
 *     clock; sent by another thread with pthread_kill): the poll wakes, the
 *     handler's callback runs on the loop's thread, it stops the loop;
 *   - add, replace (the old handle is dropped, not cancelled), remove
 *     (1, then 0; the default disposition is back), close removes all;
 *   - refusals: invalid numbers (0, 32, 65, -1), SIGKILL and SIGSTOP ("sig 9
 *     cannot be caught"), NULL callback, closed loop, a second loop, the
 *     eventfd wake-up; set_wakeup while handlers are installed;
 *   - two signals before the loop reads: two runs (one per byte);
 *   - a cancelled handler's handle: the next signal removes the handler;
 *   - the wake-up byte of call_soon_threadsafe is 0, never mistaken for a
 *     signal (SIGHUP is 1).
 * A signal handler only writes a byte; the tests send signals to the
 * loop's own thread (raise(), pthread_kill()), never to the process.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "vloop.h"

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    label_add(arg);
}

static void stop_note(loop_t *loop, void *arg)
{
    label_add(arg);
    loop_stop(loop);
}

static bool is_default(int sig)
{
    struct sigaction sa;
    ck_assert_int_eq(sigaction(sig, NULL, &sa), 0);
    return sa.sa_handler == SIG_DFL;
}

/* ---- delivered while the loop sleeps ---------------------------------------- */

static void *send_later(void *arg)
{
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    pthread_kill(*(pthread_t *)arg, SIGINT);
    return NULL;
}

static void watchdog(loop_t *loop, void *arg)
{
    (void)arg;
    label_add("watchdog");
    loop_stop(loop);
}

START_TEST(sigint_wakes_a_sleeping_loop)
{
    loop_t *loop = loop_new();
    labels_reset();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGINT, stop_note, "sigint"), 0);
    loop_call_later(loop, 86400, note, "a day later");
    loop_call_later(loop, 20, watchdog, NULL);
    pthread_t self = pthread_self(), th;
    ck_assert_int_eq(pthread_create(&th, NULL, send_later, &self), 0);
    double t0 = loop_time(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    double took = loop_time(loop) - t0;
    pthread_join(th, NULL);
    ck_assert_str_eq(ran, "sigint");
    ck_assert_msg(took < 5, "the signal took %.3f s to wake the loop", took);
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert(is_default(SIGINT));
    loop_free(loop);
}
END_TEST

/* ---- add, replace, remove ------------------------------------------------------ */

START_TEST(add_replace_remove)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "first"), 0);
    handle_t *first = loop_get_signal_handler(loop, SIGUSR1);
    ck_assert_ptr_nonnull(first);
    handle_retain(first);
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "second"), 0);
    ck_assert_int_eq(handle_cancelled(first), 0); /* dropped, not cancelled */
    handle_release(first);
    raise(SIGUSR1);
    /* The hook stops an idle loop at once: a timer keeps it going.  Tick 1
     * reads the byte (read_from_self queues the handler) and runs the
     * timer; tick 2 runs the handler -- asyncio's order. */
    loop_call_later(loop, 1, note, "timer");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "timer second");
    ck_assert_int_eq(loop_remove_signal_handler(loop, SIGUSR1), 1);
    ck_assert(is_default(SIGUSR1));
    ck_assert_int_eq(loop_remove_signal_handler(loop, SIGUSR1), 0);
    ck_assert_ptr_null(loop_get_signal_handler(loop, SIGUSR1));
    finish(loop);
}
END_TEST

START_TEST(two_signals_two_runs)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR2, note, "usr2"), 0);
    raise(SIGUSR2);
    raise(SIGUSR2);
    loop_call_later(loop, 1, note, "timer");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "timer usr2 usr2");
    finish(loop);
    ck_assert(is_default(SIGUSR2));
}
END_TEST

START_TEST(cancelled_handler_is_removed)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "usr1"), 0);
    handle_cancel(loop_get_signal_handler(loop, SIGUSR1));
    raise(SIGUSR1);
    loop_call_later(loop, 1, note, "timer");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "timer");
    ck_assert_ptr_null(loop_get_signal_handler(loop, SIGUSR1)); /* "Remove it properly." */
    ck_assert(is_default(SIGUSR1));
    finish(loop);
}
END_TEST

START_TEST(wakeup_byte_is_not_a_signal)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGHUP, note, "hup"), 0);
    for (int i = 0; i < 3; i++)
        loop_call_soon_threadsafe(loop, note, "ts");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "ts ts ts");
    finish(loop);
}
END_TEST

START_TEST(close_removes_handlers)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "usr1"), 0);
    ck_assert(!is_default(SIGUSR1));
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert(is_default(SIGUSR1));
    /* another loop may take the signals now */
    loop_t *other = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(other, SIGUSR1, note, "other"), 0);
    ck_assert_int_eq(loop_close(other), 0);
    loop_free(other);
    loop_free(loop);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------ */

#define REFUSED_EXACTLY(loop, failed, err, says)                                         \
    do {                                                                                 \
        errno = 0;                                                                       \
        int failed_ = (failed);                                                          \
        int errno_ = errno;                                                              \
        ck_assert_msg(failed_, "%s was not refused", #failed);                           \
        ck_assert_int_eq(errno_, (err));                                                 \
        ck_assert_str_eq(loop_error(loop), (says));                                      \
    } while (0)

START_TEST(invalid_signal_numbers)
{
    loop_t *loop = virtual_loop();
    REFUSED_EXACTLY(loop, loop_add_signal_handler(loop, 0, note, "x") < 0, EINVAL,
                    "invalid signal number 0");
    REFUSED_EXACTLY(loop, loop_add_signal_handler(loop, 65, note, "x") < 0, EINVAL,
                    "invalid signal number 65");
    REFUSED_EXACTLY(loop, loop_add_signal_handler(loop, -1, note, "x") < 0, EINVAL,
                    "invalid signal number -1");
#ifdef __linux__
    REFUSED_EXACTLY(loop, loop_add_signal_handler(loop, 32, note, "x") < 0, EINVAL,
                    "invalid signal number 32"); /* glibc's own, not in valid_signals() */
#endif
    REFUSED_EXACTLY(loop, loop_remove_signal_handler(loop, 0) < 0, EINVAL,
                    "invalid signal number 0");
    finish(loop);
}
END_TEST

START_TEST(uncatchable_signals)
{
    loop_t *loop = virtual_loop();
    char says[64];
    snprintf(says, sizeof says, "sig %d cannot be caught", SIGKILL);
    REFUSED_EXACTLY(loop, loop_add_signal_handler(loop, SIGKILL, note, "x") < 0, EINVAL, says);
    snprintf(says, sizeof says, "sig %d cannot be caught", SIGSTOP);
    REFUSED_EXACTLY(loop, loop_add_signal_handler(loop, SIGSTOP, note, "x") < 0, EINVAL, says);
    ck_assert_ptr_null(loop_get_signal_handler(loop, SIGKILL));
    /* and nothing was left behind: another loop can take signals */
    loop_t *other = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(other, SIGUSR1, note, "x"), 0);
    ck_assert_int_eq(loop_close(other), 0);
    loop_free(other);
    finish(loop);
}
END_TEST

START_TEST(null_callback_refused)
{
    loop_t *loop = virtual_loop();
    char says[64];
    snprintf(says, sizeof says, "callback for signal %d is NULL", SIGUSR1);
    REFUSED_EXACTLY(loop, loop_add_signal_handler(loop, SIGUSR1, NULL, "x") < 0, EINVAL, says);
    finish(loop);
}
END_TEST

START_TEST(second_loop_refused)
{
    loop_t *loop = virtual_loop(), *other = loop_new_virtual();
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "x"), 0);
    errno = 0;
    ck_assert_int_eq(loop_add_signal_handler(other, SIGUSR2, note, "y"), -1);
    ck_assert_int_eq(errno, EBUSY);
    ck_assert_ptr_nonnull(strstr(loop_error(other), "another loop handles signals"));
    ck_assert_int_eq(loop_close(other), 0);
    loop_free(other);
    finish(loop);
}
END_TEST

START_TEST(eventfd_wakeup_refused)
{
#ifdef __linux__
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_set_wakeup(loop, LOOP_WAKEUP_EVENTFD, 0), 0);
    errno = 0;
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "x"), -1);
    ck_assert_int_eq(errno, ENOTSUP);
    ck_assert_int_eq(loop_set_wakeup(loop, LOOP_WAKEUP_PIPE, 0), 0);
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "x"), 0);
    errno = 0;
    ck_assert_int_eq(loop_set_wakeup(loop, LOOP_WAKEUP_PIPE, 1), -1); /* the fd would change */
    ck_assert_int_eq(errno, EBUSY);
    finish(loop);
#endif
}
END_TEST

/* A kept handler's handle outlives the loop, as every kept handle does
 * (loop.h): cancelling it after loop_free() touches no freed memory
 * (AddressSanitizer, valgrind). */
START_TEST(kept_handler_outlives_the_loop)
{
    loop_t *loop = virtual_loop();
    loop_set_debug(loop, 1);
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "x"), 0);
    handle_t *kept = loop_get_signal_handler(loop, SIGUSR1);
    handle_retain(kept);
    finish(loop);
    handle_cancel(kept);
    ck_assert_int_eq(handle_cancelled(kept), 1);
    handle_release(kept);
}
END_TEST

static Suite *signals_suite(void)
{
    Suite *s = suite_create("signals");
    TCase *tc = tcase_create("delivery");
    tcase_add_test(tc, sigint_wakes_a_sleeping_loop);
    tcase_add_test(tc, add_replace_remove);
    tcase_add_test(tc, two_signals_two_runs);
    tcase_add_test(tc, cancelled_handler_is_removed);
    tcase_add_test(tc, wakeup_byte_is_not_a_signal);
    tcase_add_test(tc, close_removes_handlers);
    tcase_add_test(tc, kept_handler_outlives_the_loop);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_add_test(tc, invalid_signal_numbers);
    tcase_add_test(tc, uncatchable_signals);
    tcase_add_test(tc, null_callback_refused);
    tcase_add_test(tc, second_loop_refused);
    tcase_add_test(tc, eventfd_wakeup_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(signals_suite());
}
