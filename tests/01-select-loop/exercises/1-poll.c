/* Exercise 01.1 (1-poll): the loop on poll(), so that fds >= FD_SETSIZE work.
 *
 * The student's loop.c (code/01-select-loop/exercises/1-poll/loop.c)
 * replaces the chapter's.  These tests check the new ability (watching an fd
 * at or above FD_SETSIZE, here 1500 when the process may open it) and that
 * the old rules still hold: only ready fds are called, a watch removed by an
 * earlier callback of the same tick is not called, stop() makes a
 * non-blocking tick, a hang-up is reported to the reader.  And that it
 * waits in poll(), with the high fd among poll()'s: select() handed sets
 * longer than FD_SETSIZE would pass the rest (a cheat: tests/grade/README.md).
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "loop.h"

#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <sys/poll.h> /* struct pollfd, for the poll() below */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"

/* These poll() and select() stand in front of the C library's (a
 * definition in the program wins): they count the calls, and poll() keeps
 * the highest fd it was handed; then they call the library's. */
static int poll_calls, poll_max_fd, select_calls;

typedef int poll_fn(struct pollfd *, nfds_t, int);
typedef int select_fn(int, fd_set *, fd_set *, fd_set *, struct timeval *);

int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
    static poll_fn *real;
    if (real == NULL)
        real = (poll_fn *)dlsym(RTLD_NEXT, "poll");
    poll_calls++;
    for (nfds_t i = 0; i < nfds; i++)
        if (fds[i].fd > poll_max_fd)
            poll_max_fd = fds[i].fd;
    return real(fds, nfds, timeout);
}

int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
    static select_fn *real;
    if (real == NULL)
        real = (select_fn *)dlsym(RTLD_NEXT, "select");
    select_calls++;
    return real(nfds, r, w, e, timeout);
}

struct probe {
    int calls;
    int fd;
    int drain;
};

static void probe_cb(loop_t *loop, void *arg)
{
    (void)loop;
    struct probe *p = arg;
    p->calls++;
    if (p->drain) {
        char buf[64];
        (void)!read(p->fd, buf, sizeof buf);
    }
}

static void make_pair(int sv[2])
{
    ck_assert_msg(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0,
                  "socketpair: %s", strerror(errno));
}

static void one_tick(loop_t *loop)
{
    loop_stop(loop);
    ck_assert_msg(loop_run_forever(loop) == 0, "loop_run_forever failed: %s",
                  loop_error(loop));
}

/* An fd number >= FD_SETSIZE that this process may open, raising the soft
 * RLIMIT_NOFILE if the hard limit allows; -1 if it cannot. */
static int high_fd_number(int wanted)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -1;
    rlim_t need = (rlim_t)wanted + 2;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
            return -1;
        rl.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            return -1;
    }
    return wanted;
}

START_TEST(fd_above_fd_setsize)
{
    int want = FD_SETSIZE > 1500 ? FD_SETSIZE + 10 : 1500;
    int high = high_fd_number(want);
    if (high < 0) {
        printf("SKIP fd_above_fd_setsize: the hard open-file limit (ulimit -Hn) "
               "is below %d, so no fd >= FD_SETSIZE can exist here\n", want + 2);
        return;
    }
    int sv[2];
    make_pair(sv);
    ck_assert_msg(dup2(sv[1], high) == high && dup2(sv[0], high + 1) == high + 1,
                  "dup2 to fd %d failed: %s", high, strerror(errno));
    close(sv[0]);
    close(sv[1]);

    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    /* Watch a low fd first, so that watching a high one must grow (and may
     * move) tables that already exist. */
    int low[2];
    make_pair(low);
    struct probe pl = {.fd = low[1], .drain = 1};
    ck_assert_int_eq(loop_add_reader(loop, low[1], probe_cb, &pl), 0);
    struct probe r = {.fd = high, .drain = 1}, w = {.fd = high + 1};
    int rc = loop_add_reader(loop, high, probe_cb, &r);
    ck_assert_msg(rc == 0, "loop_add_reader(loop, %d, ...) was refused: \"%s\". "
                  "select() cannot watch an fd >= FD_SETSIZE (%d); poll() can: "
                  "replace select() in run_once and lift the limit in check_fd",
                  high, loop_error(loop), FD_SETSIZE);
    ck_assert_msg(loop_add_writer(loop, high + 1, probe_cb, &w) == 0,
                  "loop_add_writer(loop, %d, ...) was refused: \"%s\"",
                  high + 1, loop_error(loop));
    one_tick(loop);
    ck_assert_msg(r.calls == 0 && w.calls == 1,
                  "first tick: fd %d (nothing to read) and fd %d (writable): "
                  "reader called %d time(s), writer %d; expected 0 and 1",
                  high, high + 1, r.calls, w.calls);
    ck_assert_int_eq(loop_remove_writer(loop, high + 1), 1);
    ck_assert_int_eq(write(high + 1, "x", 1), 1);
    one_tick(loop);
    ck_assert_msg(r.calls == 1, "fd %d had a byte to read, but its reader was "
                  "called %d time(s) (expected 1)", high, r.calls);
    ck_assert_int_eq(write(low[0], "x", 1), 1);
    one_tick(loop);
    ck_assert_msg(pl.calls == 1 && r.calls == 1, "the low fd %d, watched before "
                  "the high ones, had a byte to read: its reader was called %d "
                  "time(s) (expected 1)", low[1], pl.calls);
    ck_assert_msg(select_calls == 0 && poll_calls >= 3 && poll_max_fd >= high,
                  "the loop must wait in poll(), with fd %d among its fds: "
                  "select() was called %d time(s), poll() %d time(s) (highest "
                  "fd %d)", high, select_calls, poll_calls, poll_max_fd);
    ck_assert_int_eq(loop_remove_reader(loop, high), 1);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    close(high);
    close(high + 1);
    close(low[0]);
    close(low[1]);
}
END_TEST

START_TEST(still_refuses_bad_arguments)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    errno = 0;
    ck_assert_msg(loop_add_reader(loop, -1, probe_cb, NULL) == -1 && errno == EBADF,
                  "add_reader(-1) must still be refused with EBADF");
    errno = 0;
    ck_assert_msg(loop_add_reader(loop, 0, NULL, NULL) == -1 && errno == EINVAL,
                  "add_reader with a NULL callback must still be refused (EINVAL)");
    errno = 0;
    ck_assert_msg(loop_add_reader(loop, 2000000000, probe_cb, NULL) == -1 &&
                  errno == EINVAL,
                  "add_reader(2000000000) must be refused with EINVAL: no "
                  "process may open that fd (and a table that long would take "
                  "gigabytes)");
    if (high_fd_number(1500) > 0) {
        int rc = loop_remove_reader(loop, 1400);
        ck_assert_msg(rc == 0, "remove_reader(1400), an fd never watched, must "
                      "return 0, got %d (%s)", rc, loop_error(loop));
    }
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

START_TEST(only_ready_fds)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    int a[2], b[2], c[2];
    make_pair(a);
    make_pair(b);
    make_pair(c);
    struct probe pa = {.fd = a[1], .drain = 1}, pb = {.fd = b[1], .drain = 1},
                 pc = {.fd = c[1], .drain = 1};
    ck_assert_int_eq(loop_add_reader(loop, a[1], probe_cb, &pa), 0);
    ck_assert_int_eq(loop_add_reader(loop, b[1], probe_cb, &pb), 0);
    ck_assert_int_eq(loop_add_reader(loop, c[1], probe_cb, &pc), 0);
    ck_assert_int_eq(write(c[0], "x", 1), 1);
    one_tick(loop);
    ck_assert_msg(pa.calls == 0 && pb.calls == 0 && pc.calls == 1,
                  "only the third fd had data; calls were %d, %d, %d "
                  "(expected 0, 0, 1)", pa.calls, pb.calls, pc.calls);
    ck_assert_int_eq(write(a[0], "x", 1), 1);
    one_tick(loop);
    ck_assert_msg(pa.calls == 1 && pb.calls == 0 && pc.calls == 1,
                  "only the first fd had data; calls were %d, %d, %d "
                  "(expected 1, 0, 1)", pa.calls, pb.calls, pc.calls);
    /* Here too, where no fd is high (the open-file limit may keep
     * fd_above_fd_setsize from running). */
    ck_assert_msg(select_calls == 0 && poll_calls > 0, "the loop must wait in poll(): "
                  "select() was called %d time(s), poll() %d time(s)", select_calls,
                  poll_calls);
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
        close(c[i]);
    }
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

struct remover {
    int calls;
    int other_fd;
};

static void remove_other_cb(loop_t *loop, void *arg)
{
    struct remover *r = arg;
    r->calls++;
    loop_remove_reader(loop, r->other_fd);
}

START_TEST(removed_in_same_tick_not_called)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    int a[2], b[2];
    make_pair(a);
    make_pair(b);
    struct remover ra = {.other_fd = b[1]}, rb = {.other_fd = a[1]};
    ck_assert_int_eq(loop_add_reader(loop, a[1], remove_other_cb, &ra), 0);
    ck_assert_int_eq(loop_add_reader(loop, b[1], remove_other_cb, &rb), 0);
    ck_assert_int_eq(write(a[0], "x", 1), 1);
    ck_assert_int_eq(write(b[0], "x", 1), 1);
    one_tick(loop);
    ck_assert_msg(ra.calls + rb.calls == 1,
                  "the first callback removed the other fd's reader, yet %d "
                  "callbacks ran: look the watch up again right before each "
                  "call", ra.calls + rb.calls);
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
    }
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

START_TEST(stop_makes_a_nonblocking_tick)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    int sv[2];
    make_pair(sv);
    struct probe p = {.fd = sv[1], .drain = 1};
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &p), 0);
    /* With nothing to read, a blocking poll would wait forever: guard it. */
    alarm(5);
    one_tick(loop);
    alarm(0);
    ck_assert_int_eq(p.calls, 0);
    close(sv[0]);
    close(sv[1]);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

/* The peer hangs up: poll() reports POLLIN and/or POLLHUP; either way the
 * reader must run, so that its read() sees end-of-file. */
START_TEST(hangup_reaches_the_reader)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    int sv[2];
    make_pair(sv);
    struct probe p = {.fd = sv[1]};
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &p), 0);
    close(sv[0]);
    one_tick(loop);
    ck_assert_msg(p.calls == 1, "the peer closed its end; the reader must be "
                  "called to see end-of-file (called %d times). POLLHUP counts "
                  "as readable", p.calls);
    close(sv[1]);
    ck_assert_int_eq(loop_remove_reader(loop, sv[1]), 1);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 01.1: poll");
    TCase *tc = tcase_create("poll");
    tcase_add_test(tc, fd_above_fd_setsize);
    tcase_add_test(tc, still_refuses_bad_arguments);
    tcase_add_test(tc, only_ready_fds);
    tcase_add_test(tc, removed_in_same_tick_not_called);
    tcase_add_test(tc, stop_makes_a_nonblocking_tick);
    tcase_add_test(tc, hangup_reaches_the_reader);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
