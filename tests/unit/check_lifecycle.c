/* check_lifecycle.c -- the loop's states and CPython's refusals (chapter 08).
 *
 * Written against chapter 08's loop.h and run against every later stage:
 *   - the states NEW, RUNNING, STOPPING, CLOSED, as a callback sees them;
 *   - one test per refusal, each with CPython's words and an errno:
 *     "Event loop is closed" (run, call_soon, call_later, call_at,
 *     add_reader, add_signal_handler, set_wakeup; call_soon_threadsafe:
 *     errno only), "This event loop is already running", "Cannot run the
 *     event loop while another loop is running", "Cannot close a running
 *     event loop"; closing twice is no error; loop_free inside a callback
 *     is refused;
 *   - the running loop is per thread: two threads run two loops at once;
 *   - stop, then run again: what was queued runs in the second run;
 *   - close releases everything: queued handles, timers, readers, signal
 *     handlers (their disposition restored), and a kept handle survives it
 *     (valgrind: no leak).
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"
#include "vloop.h"

/* call refused: its result (-1 or NULL) and errno err, and loop_error()
 * says exactly `says`. */
#define REFUSED_EXACTLY(loop, failed, err, says)                                         \
    do {                                                                                 \
        errno = 0;                                                                       \
        int failed_ = (failed);                                                          \
        int errno_ = errno;                                                              \
        ck_assert_msg(failed_, "%s was not refused", #failed);                           \
        ck_assert_int_eq(errno_, (err));                                                 \
        ck_assert_str_eq(loop_error(loop), (says));                                      \
    } while (0)

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    label_add(arg);
}

/* ---- states ---------------------------------------------------------------- */

static char seen[256];

static void see_state(loop_t *loop, void *arg)
{
    (void)arg;
    strcat(seen, loop_state_name(loop_get_state(loop)));
    strcat(seen, " ");
}

static void stop_and_see(loop_t *loop, void *arg)
{
    loop_stop(loop);
    see_state(loop, arg);
}

START_TEST(states_new_running_stopping_closed)
{
    loop_t *loop = virtual_loop();
    seen[0] = '\0';
    ck_assert_int_eq(loop_get_state(loop), LOOP_NEW);
    ck_assert_int_eq(loop_is_running(loop), 0);
    ck_assert_int_eq(loop_is_closed(loop), 0);
    loop_call_soon(loop, see_state, NULL);
    loop_call_soon(loop, stop_and_see, NULL);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(seen, "RUNNING STOPPING ");
    ck_assert_int_eq(loop_get_state(loop), LOOP_NEW); /* stopped: can run again */
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert_int_eq(loop_get_state(loop), LOOP_CLOSED);
    ck_assert_int_eq(loop_is_closed(loop), 1);
    ck_assert_str_eq(loop_state_name(LOOP_CLOSED), "CLOSED");
    loop_free(loop);
}
END_TEST

/* ---- refusals, one message each ------------------------------------------- */

START_TEST(run_forever_closed)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_close(loop), 0);
    REFUSED_EXACTLY(loop, loop_run_forever(loop) < 0, EINVAL, "Event loop is closed");
    loop_free(loop);
}
END_TEST

START_TEST(calls_after_close)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_close(loop), 0);
    REFUSED_EXACTLY(loop, loop_call_soon(loop, note, "a") == NULL, EINVAL, "Event loop is closed");
    REFUSED_EXACTLY(loop, loop_call_later(loop, 1, note, "a") == NULL, EINVAL,
                    "Event loop is closed");
    REFUSED_EXACTLY(loop, loop_call_at(loop, 1, note, "a") == NULL, EINVAL,
                    "Event loop is closed");
    REFUSED_EXACTLY(loop, loop_add_reader(loop, 0, note, "a") < 0, EINVAL,
                    "Event loop is closed");
    REFUSED_EXACTLY(loop, loop_add_signal_handler(loop, SIGUSR1, note, "a") < 0, EINVAL,
                    "Event loop is closed");
    REFUSED_EXACTLY(loop, loop_set_wakeup(loop, LOOP_WAKEUP_PIPE, 0) < 0, EINVAL,
                    "Event loop is closed");
    errno = 0;
    ck_assert_ptr_null(loop_call_soon_threadsafe(loop, note, "a")); /* errno only */
    ck_assert_int_eq(errno, EINVAL);
    loop_free(loop);
}
END_TEST

static int inner_rc, inner_errno;
static char inner_error[160];

static void run_again(loop_t *loop, void *arg)
{
    loop_t *other = arg != NULL ? arg : loop;
    errno = 0;
    inner_rc = loop_run_forever(other);
    inner_errno = errno;
    snprintf(inner_error, sizeof inner_error, "%s", loop_error(other));
}

START_TEST(run_forever_already_running)
{
    loop_t *loop = virtual_loop();
    loop_call_soon(loop, run_again, NULL);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(inner_rc, -1);
    ck_assert_int_eq(inner_errno, EBUSY);
    ck_assert_str_eq(inner_error, "This event loop is already running");
    finish(loop);
}
END_TEST

static loop_t *running_seen;

static void see_running(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    running_seen = loop_get_running_loop();
}

START_TEST(run_forever_another_loop_running)
{
    loop_t *loop = virtual_loop(), *other = loop_new_virtual();
    ck_assert_ptr_null(loop_get_running_loop());
    loop_call_soon(loop, see_running, NULL);
    loop_call_soon(loop, run_again, other);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_ptr_eq(running_seen, loop);
    ck_assert_ptr_null(loop_get_running_loop());
    ck_assert_int_eq(inner_rc, -1);
    ck_assert_int_eq(inner_errno, EBUSY);
    ck_assert_str_eq(inner_error, "Cannot run the event loop while another loop is running");
    finish(loop);
    ck_assert_int_eq(loop_close(other), 0);
    loop_free(other);
}
END_TEST

static void close_inside(loop_t *loop, void *arg)
{
    (void)arg;
    errno = 0;
    inner_rc = loop_close(loop);
    inner_errno = errno;
    snprintf(inner_error, sizeof inner_error, "%s", loop_error(loop));
}

START_TEST(close_running)
{
    loop_t *loop = virtual_loop();
    loop_call_soon(loop, close_inside, NULL);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(inner_rc, -1);
    ck_assert_int_eq(inner_errno, EBUSY);
    ck_assert_str_eq(inner_error, "Cannot close a running event loop");
    ck_assert_int_eq(loop_is_closed(loop), 0);
    finish(loop);
}
END_TEST

START_TEST(close_twice_is_harmless)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert_int_eq(loop_is_closed(loop), 1);
    loop_free(loop);
}
END_TEST

static void free_inside(loop_t *loop, void *arg)
{
    (void)arg;
    errno = 0;
    loop_free(loop);
    inner_errno = errno;
}

START_TEST(free_running_refused)
{
    loop_t *loop = virtual_loop();
    loop_call_soon(loop, free_inside, NULL);
    loop_call_soon(loop, note, "after");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(inner_errno, EBUSY);
    ck_assert_str_eq(ran, "after"); /* the loop went on, intact */
    finish(loop);
}
END_TEST

/* ---- the running loop is per thread ---------------------------------------- */

static void stop_now(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* Another thread runs its own loop while this thread's runs: allowed, and
 * each thread sees its own as the running loop. */
static void *run_one(void *arg)
{
    loop_t *loop = loop_new_virtual();
    loop_call_later(loop, 1, see_running, NULL);
    loop_call_later(loop, 2, stop_now, NULL);
    int rc = loop_run_forever(loop);
    *(int *)arg = rc == 0 && running_seen == loop ? 0 : 1;
    loop_close(loop);
    loop_free(loop);
    return NULL;
}

static void run_a_thread(loop_t *loop, void *arg)
{
    (void)loop;
    int *rc = arg;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, run_one, rc), 0);
    pthread_join(th, NULL);
}

START_TEST(two_threads_two_loops)
{
    loop_t *loop = virtual_loop();
    int rc = 99;
    loop_call_soon(loop, run_a_thread, &rc); /* runs while this loop runs */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(rc, 0);
    finish(loop);
}
END_TEST

/* ---- stop, run again ------------------------------------------------------- */

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    label_add("stop");
    loop_call_soon(loop, note, "queued");
    loop_stop(loop);
}

START_TEST(stop_then_run_again)
{
    loop_t *loop = virtual_loop();
    loop_call_soon(loop, stop_cb, NULL);
    loop_call_soon(loop, note, "same_tick");
    loop_call_later(loop, 5, note, "later");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "stop same_tick"); /* stop() ends the tick, not the snapshot */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "stop same_tick queued later");
    finish(loop);
}
END_TEST

/* ---- close releases everything ---------------------------------------------- */

START_TEST(close_releases_everything)
{
    loop_t *loop = virtual_loop();
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    for (int i = 0; i < 10; i++) {
        loop_call_soon(loop, note, "never");
        loop_call_later(loop, i, note, "never");
    }
    handle_t *kept = loop_call_later(loop, 100, note, "never");
    handle_retain(kept);
    ck_assert_int_eq(loop_add_reader(loop, sv[0], note, "never"), 0);
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR1, note, "never"), 0);
    ck_assert_int_eq(loop_add_signal_handler(loop, SIGUSR2, note, "never"), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    ck_assert_uint_eq(loop_scheduled_len(loop), 0);
    struct sigaction sa;
    ck_assert_int_eq(sigaction(SIGUSR1, NULL, &sa), 0);
    ck_assert_ptr_eq((void *)sa.sa_handler, (void *)SIG_DFL);
    ck_assert_int_eq(sigaction(SIGUSR2, NULL, &sa), 0);
    ck_assert_ptr_eq((void *)sa.sa_handler, (void *)SIG_DFL);
    ck_assert_ptr_null(loop_get_signal_handler(loop, SIGUSR1));
    handle_cancel(kept); /* still valid: it was kept */
    ck_assert_int_eq(handle_cancelled(kept), 1);
    loop_free(loop);
    handle_release(kept);
    ck_assert_int_eq(nran, 0);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

static Suite *lifecycle_suite(void)
{
    Suite *s = suite_create("lifecycle");
    TCase *tc = tcase_create("states");
    tcase_add_test(tc, states_new_running_stopping_closed);
    tcase_add_test(tc, two_threads_two_loops);
    tcase_add_test(tc, stop_then_run_again);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_add_test(tc, run_forever_closed);
    tcase_add_test(tc, calls_after_close);
    tcase_add_test(tc, run_forever_already_running);
    tcase_add_test(tc, run_forever_another_loop_running);
    tcase_add_test(tc, close_running);
    tcase_add_test(tc, close_twice_is_harmless);
    tcase_add_test(tc, free_running_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("close");
    tcase_add_test(tc, close_releases_everything);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(lifecycle_suite());
}
