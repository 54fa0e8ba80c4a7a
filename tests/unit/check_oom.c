/* check_oom.c -- out of memory loses nothing (chapter 02 on).
 *
 * Every call into the loop that allocates may find no memory.  The rule:
 * the call fails with -1 or NULL, errno ENOMEM and a message in
 * loop_error() (loop_new and loop_call_soon_threadsafe, which have no
 * loop_error() to write to, only set errno), and it changes nothing --
 * nothing that the loop accepted before is lost.  loop_run_forever() is
 * such a call: out of memory while a tick moves handles to the ready deque
 * (the ready fds' from chapter 02, the due timers' from chapter 03), it
 * returns -1 before that tick runs anything, the timer stays in the heap,
 * the fd stays ready, and the next run, once memory is back, runs
 * everything once and in the order an uninterrupted run would have.
 *
 * How: SQLite's.  The suite is linked with -Wl,--wrap=malloc,calloc,realloc
 * (tests/suites.mk), so tests/support/failalloc.h sees every allocation the
 * stage's libloop.a makes and can fail the Nth.  A small scenario (call_soon,
 * a call_soon_threadsafe, two readers, timers with equal deadlines and
 * cancelled ones, callbacks that schedule more) runs once with no failure,
 * which gives its log and its number of allocations T; then once for every
 * N in 1..T with the Nth allocation failing -- alone ("transient"), and
 * with every later one until the test gives memory back ("persistent").
 * Each refused call is checked (ENOMEM, message) and made again, as a
 * program would once memory is available; the log of the whole run must
 * equal the log of the run that never failed.
 *
 * The suite is written against chapter 02's loop.h; what later chapters add
 * (timers, a virtual clock, cancel, call_soon_threadsafe) it declares weak
 * below and uses when the stage's library has it.
 *
 * Build: see tests/lib.sh build_suite (it adds oom_LDFLAGS).
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"
#include "failalloc.h"

/* ---- what later stages add: NULL where the stage has none ---------------- */

__attribute__((weak)) loop_t *loop_new_virtual(void);
__attribute__((weak)) handle_t *loop_call_later(loop_t *loop, double delay,
                                                loop_callback callback, void *arg);
__attribute__((weak)) void loop_set_wait_hook(loop_t *loop,
                                              double (*hook)(loop_t *, double, void *),
                                              void *ctx);
__attribute__((weak)) int loop_set_time(loop_t *loop, double now);
__attribute__((weak)) double loop_time(loop_t *loop);
__attribute__((weak)) void handle_cancel(handle_t *handle);
__attribute__((weak)) handle_t *loop_call_soon_threadsafe(loop_t *loop, loop_callback callback,
                                                          void *arg);

#define HAVE_TIMERS (loop_call_later != NULL)

/* ---- the log, and what went wrong ---------------------------------------- */

/* Nothing here allocates through the wrapped functions (snprintf is libc's
 * own business), and no ck_assert runs while the hook is armed: Check's
 * own allocations would be counted, and could be the one that fails. */
static char run_log[2048];
static char problem[512]; /* the first broken rule, "" if none */
static long scenario_allocs; /* allocations the last scenario() made */

static void note(loop_t *loop, const char *label)
{
    size_t len = strlen(run_log);
    if (HAVE_TIMERS)
        snprintf(run_log + len, sizeof run_log - len, "%s%s@%g", len ? " " : "", label,
                 loop_time(loop));
    else
        snprintf(run_log + len, sizeof run_log - len, "%s%s", len ? " " : "", label);
}

static void complain(const char *fmt, const char *what, int err, const char *msg)
{
    if (problem[0] == '\0')
        snprintf(problem, sizeof problem, fmt, what, err, strerror(err), msg);
}

/* @region refused */
/* A call was refused.  It must say ENOMEM (and, with a loop, why); then,
 * as a program would once memory is back, the caller makes it again. */
static void refused(loop_t *loop, const char *what)
{
    int err = errno;
    const char *msg = loop != NULL ? loop_error(loop) : "(no loop)";
    if (failalloc_failed == 0)
        complain("%s failed (errno %d, %s: %s) with no allocation failing", what, err, msg);
    else if (err != ENOMEM)
        complain("%s failed with errno %d (%s), expected ENOMEM: %s", what, err, msg);
    else if (loop != NULL && strstr(msg, "memory") == NULL)
        complain("%s failed with ENOMEM (errno %d, %s) but loop_error() says \"%s\"", what,
                 err, msg);
    if (failalloc_persistent)
        failalloc_disarm(); /* memory is back */
}
/* @end refused */

#define TRIES 3 /* one failure, then success: a third try means a bug */
#define GIVE_UP(what) complain("%s kept failing (errno %d, %s)%s", what, errno, "")

static handle_t *soon(loop_t *loop, loop_callback cb, void *arg)
{
    for (int i = 0; i < TRIES; i++) {
        handle_t *h = loop_call_soon(loop, cb, arg);
        if (h != NULL)
            return h;
        refused(loop, "loop_call_soon");
    }
    GIVE_UP("loop_call_soon");
    return NULL;
}

static handle_t *later(loop_t *loop, double delay, loop_callback cb, void *arg)
{
    for (int i = 0; i < TRIES; i++) {
        handle_t *h = loop_call_later(loop, delay, cb, arg);
        if (h != NULL)
            return h;
        refused(loop, "loop_call_later");
    }
    GIVE_UP("loop_call_later");
    return NULL;
}

static void threadsafe(loop_t *loop, loop_callback cb, void *arg)
{
    for (int i = 0; i < TRIES; i++) {
        if (loop_call_soon_threadsafe(loop, cb, arg) != NULL)
            return;
        refused(NULL, "loop_call_soon_threadsafe"); /* it has no loop_error() */
    }
    GIVE_UP("loop_call_soon_threadsafe");
}

static void reader(loop_t *loop, int fd, loop_callback cb, void *arg)
{
    for (int i = 0; i < TRIES; i++) {
        if (loop_add_reader(loop, fd, cb, arg) == 0)
            return;
        refused(loop, "loop_add_reader");
    }
    GIVE_UP("loop_add_reader");
}

static void writer(loop_t *loop, int fd, loop_callback cb, void *arg)
{
    for (int i = 0; i < TRIES; i++) {
        if (loop_add_writer(loop, fd, cb, arg) == 0)
            return;
        refused(loop, "loop_add_writer");
    }
    GIVE_UP("loop_add_writer");
}

static void unwatch_writer(loop_t *loop, int fd)
{
    for (int i = 0; i < TRIES; i++) {
        int rc = loop_remove_writer(loop, fd);
        if (rc == 1)
            return;
        if (rc == 0) {
            complain("%s returned 0 (errno %d, %s): the writer was lost%s",
                     "loop_remove_writer", errno, "");
            return;
        }
        refused(loop, "loop_remove_writer");
    }
    GIVE_UP("loop_remove_writer");
}

static void run(loop_t *loop)
{
    for (int i = 0; i < TRIES; i++) {
        if (loop_run_forever(loop) == 0)
            return;
        refused(loop, "loop_run_forever");
    }
    GIVE_UP("loop_run_forever");
}

/* ---- callbacks ------------------------------------------------------------ */

static void note_cb(loop_t *loop, void *arg)
{
    note(loop, arg);
}

static void stop_cb(loop_t *loop, void *arg)
{
    note(loop, arg);
    loop_stop(loop);
}

/* A writer: its fd is always writable, so it removes itself. */
struct wr {
    const char *label;
    int fd;
};

static void writer_cb(loop_t *loop, void *arg)
{
    struct wr *w = arg;
    note(loop, w->label);
    unwatch_writer(loop, w->fd);
}

struct rd {
    const char *label, *soon_label, *later_label;
    int fd;
    int stop; /* chapter 02 has no timer to stop the loop: this reader does */
};

static void reader_cb(loop_t *loop, void *arg)
{
    struct rd *r = arg;
    char buf[16];
    /* MSG_DONTWAIT: a reader called twice must not block the test. */
    (void)!recv(r->fd, buf, sizeof buf, MSG_DONTWAIT);
    note(loop, r->label);
    soon(loop, note_cb, (void *)r->soon_label);
    if (HAVE_TIMERS)
        later(loop, 0, note_cb, (void *)r->later_label);
    if (r->stop)
        soon(loop, stop_cb, "stop");
}

/* The virtual clock's wait: jump to the deadline; with nothing to wait
 * for, stop instead of blocking (a lost stop timer must not hang the test). */
static double jump(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (timeout < 0)
        loop_stop(loop);
    else
        loop_set_time(loop, loop_time(loop) + timeout);
    return 0;
}

/* ---- the scenario ---------------------------------------------------------- */

static const char *soon_labels[] = {"s0", "s1", "s2", "s3", "s4", "s5"};
static const char *due_labels[] = {"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"};

/* Run the scenario with the hook armed at (fail_at, persistent); leave the
 * log in run_log and the first broken rule in problem. */
static void scenario(long fail_at, int persistent)
{
    int a[2], b[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
    ck_assert_int_eq(write(a[0], "x", 1), 1);
    ck_assert_int_eq(write(b[0], "y", 1), 1);
    struct rd ra = {"ra", "c1", "d1", a[1], 0};
    struct rd rb = {"rb", "c2", "d2", b[1], !HAVE_TIMERS};
    struct wr wa = {"wa", a[0]};
    run_log[0] = '\0';
    problem[0] = '\0';

    failalloc_arm(fail_at, persistent);
    loop_t *loop = NULL;
    for (int i = 0; i < TRIES && loop == NULL; i++) {
        loop = HAVE_TIMERS ? loop_new_virtual() : loop_new();
        if (loop == NULL)
            refused(NULL, "loop_new");
    }
    if (loop == NULL) {
        failalloc_disarm();
        ck_abort_msg("loop_new kept failing: %s", problem);
    }
    if (HAVE_TIMERS)
        loop_set_wait_hook(loop, jump, NULL);

    /* Tick 1's ready deque: six call_soon and a threadsafe call (7), then
     * the poll's events in fd order: (chapter 06 on) the self-pipe's reader,
     * then wa (a[0]'s writer), ra and rb.  The deque's array of 8 grows
     * while the poll's events are queued, after one of them was queued.
     * Then the eleven timers due at 0 grow it again, while due timers are
     * moved. */
    for (int i = 0; i < 6; i++)
        soon(loop, note_cb, (void *)soon_labels[i]);
    if (loop_call_soon_threadsafe != NULL)
        threadsafe(loop, note_cb, "e");
    else
        soon(loop, note_cb, "e");
    reader(loop, a[1], reader_cb, &ra);
    reader(loop, b[1], reader_cb, &rb);
    writer(loop, a[0], writer_cb, &wa);
    if (HAVE_TIMERS) {
        /* Equal deadlines leave the heap in heapq's order, not FIFO: the
         * order of the log depends on every push and pop being made. */
        for (int i = 0; i < 10; i++)
            later(loop, 0, note_cb, (void *)due_labels[i]);
        handle_t *ux = later(loop, 0, note_cb, "ux");
        later(loop, 0.5, note_cb, "v");
        handle_t *x = later(loop, 0.75, note_cb, "x");
        later(loop, 1, note_cb, "w1");
        later(loop, 1, note_cb, "w2");
        later(loop, 1, note_cb, "w3");
        later(loop, 2, stop_cb, "stop");
        if (handle_cancel != NULL) { /* chapter 05 on */
            handle_cancel(ux);
            handle_cancel(x);
        }
    }
    run(loop);
    scenario_allocs = failalloc_count;
    failalloc_disarm();

    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
}

/* ---- tests ------------------------------------------------------------------ */

/* @region every_allocation */
/* Every allocation of the scenario fails once, in turn. */
static void every_allocation_fails(int persistent)
{
    scenario(0, 0);
    ck_assert_msg(problem[0] == '\0', "with no failure: %s", problem);
    char reference[sizeof run_log];
    strcpy(reference, run_log);
    long total = scenario_allocs;
    ck_assert_msg(total > 10, "the scenario made only %ld allocations: is the "
                  "suite linked with oom_LDFLAGS (tests/suites.mk)?", total);
    for (long n = 1; n <= total; n++) {
        scenario(n, persistent);
        ck_assert_msg(failalloc_failed > 0, "allocation %ld of %ld never came", n, total);
        ck_assert_msg(problem[0] == '\0', "allocation %ld of %ld failed%s: %s", n, total,
                      persistent ? " (and every later one)" : "", problem);
        ck_assert_msg(strcmp(run_log, reference) == 0,
                      "allocation %ld of %ld failed%s, and the run lost or repeated "
                      "something:\n  expected %s\n  got      %s",
                      n, total, persistent ? " (and every later one)" : "", reference,
                      run_log);
    }
}
/* @end every_allocation */

START_TEST(each_allocation_fails_once)
{
    every_allocation_fails(0);
}
END_TEST

START_TEST(each_allocation_fails_until_memory_is_back)
{
    every_allocation_fails(1);
}
END_TEST

/* The bug this suite was written for, in its simplest form: the ready
 * deque is full (8 call_soon fill its first array), a timer is due, and the
 * deque cannot grow.  The timer must not be popped and dropped: the run
 * fails, and the next one runs it. */
START_TEST(due_timer_kept_when_the_deque_cannot_grow)
{
    if (!HAVE_TIMERS)
        return; /* chapter 02: no timers yet */
    run_log[0] = '\0';
    problem[0] = '\0';
    loop_t *loop = loop_new_virtual();
    ck_assert_ptr_nonnull(loop);
    loop_set_wait_hook(loop, jump, NULL);
    loop_stop(loop); /* one empty tick first: a selector allocates at its first wait */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    for (int i = 0; i < 6; i++)
        ck_assert_ptr_nonnull(loop_call_soon(loop, note_cb, (void *)soon_labels[i]));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note_cb, "s6"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note_cb, "s7"));
    ck_assert_ptr_nonnull(loop_call_later(loop, 0, note_cb, "t"));
    ck_assert_ptr_nonnull(loop_call_later(loop, 1, stop_cb, "stop"));
    failalloc_arm(1, 1); /* from now on, no memory */
    int rc = loop_run_forever(loop);
    int err = errno;
    long failed = failalloc_failed;
    failalloc_disarm();
    ck_assert_msg(failed > 0, "the run allocated nothing: did 8 call_soon not fill the deque?");
    ck_assert_msg(rc == -1 && err == ENOMEM, "out of memory for the due timer, "
                  "run_forever returned %d (errno %d), expected -1 with ENOMEM", rc, err);
    ck_assert_msg(strstr(loop_error(loop), "memory") != NULL, "loop_error() says \"%s\"",
                  loop_error(loop));
    ck_assert_msg(run_log[0] == '\0', "the failed tick ran callbacks: %s", run_log);
    ck_assert_msg(loop_run_forever(loop) == 0, "the run after memory came back: %s",
                  loop_error(loop));
    ck_assert_str_eq(run_log, "s0@0 s1@0 s2@0 s3@0 s4@0 s5@0 s6@0 s7@0 t@0 stop@1");
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

static Suite *oom_suite(void)
{
    Suite *s = suite_create("oom");
    TCase *tc = tcase_create("oom");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, due_timer_kept_when_the_deque_cannot_grow);
    tcase_add_test(tc, each_allocation_fails_once);
    tcase_add_test(tc, each_allocation_fails_until_memory_is_back);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(oom_suite());
}
