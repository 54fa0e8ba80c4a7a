/* Exercise 2 (chapter 07): "bigselect", select() for fds past FD_SETSIZE.
 *
 * The backend must behave as every backend does (register, modify,
 * unregister, level-triggered waits, timeouts never early, a closed fd
 * named), and watch fds 1500 and 3000 and thousands at once, through
 * selector.h and through the loop; and it must wait in select() itself
 * (a copy of the poll backend under another name would pass the rest).
 */
#define _GNU_SOURCE
#include "loop.h"
#include "selector.h"

#include <check.h>

#include "check_main.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* This select() stands in front of the C library's (a definition in the
 * program wins): it counts the calls and keeps the largest nfds, then
 * calls the library's. */
static int select_calls, select_max_nfds;

typedef int select_fn(int, fd_set *, fd_set *, fd_set *, struct timeval *);

int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
    static select_fn *real;
    if (real == NULL)
        real = (select_fn *)dlsym(RTLD_NEXT, "select");
    select_calls++;
    if (nfds > select_max_nfds)
        select_max_nfds = nfds;
    return real(nfds, r, w, e, timeout);
}

static selector_t *open_big(void)
{
    char err[160];
    selector_t *sel = selector_open("bigselect", err, sizeof err);
    ck_assert_msg(sel != NULL, "selector_open(\"bigselect\"): %s", err);
    return sel;
}

static rlim_t raise_nofile(rlim_t want)
{
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    if (lim.rlim_cur < want) {
        lim.rlim_cur = lim.rlim_max >= want ? want : lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
        getrlimit(RLIMIT_NOFILE, &lim);
    }
    return lim.rlim_cur;
}

static int wait0(selector_t *sel, selector_event **ev)
{
    int n = selector_wait(sel, 0, ev);
    ck_assert_msg(n >= 0, "bigselect: wait(0) failed: %s", selector_error(sel));
    return n;
}

START_TEST(interface)
{
    selector_t *sel = open_big();
    ck_assert_str_eq(selector_name(sel), "bigselect");
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    selector_event *ev;
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    ck_assert_msg(wait0(sel, &ev) == 0, "a socket without data was reported");
    ck_assert_int_eq(write(sv[1], "x", 1), 1);
    ck_assert_msg(wait0(sel, &ev) == 1 && ev[0].fd == sv[0] && ev[0].events == SELECTOR_READ,
                  "a readable socket must be reported readable");
    ck_assert_msg(wait0(sel, &ev) == 1, "level-triggered: unread data is reported again");
    ck_assert_int_eq(selector_modify(sel, sv[0], SELECTOR_READ | SELECTOR_WRITE), 0);
    ck_assert_msg(wait0(sel, &ev) == 1 && ev[0].events == (SELECTOR_READ | SELECTOR_WRITE),
                  "readable and writable: one event with both bits");
    ck_assert_int_eq(selector_modify(sel, sv[0], SELECTOR_WRITE), 0);
    ck_assert_msg(wait0(sel, &ev) == 1 && ev[0].events == SELECTOR_WRITE,
                  "after modify(WRITE), only WRITE");
    ck_assert_int_eq(selector_unregister(sel, sv[0]), 0);
    ck_assert_msg(wait0(sel, &ev) == 0, "an unregistered fd was reported");
    /* A wait on nothing with a timeout still waits, and never less. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(selector_wait(sel, 2e-3, &ev), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    ck_assert_msg(waited >= 2e-3, "wait(2 ms) returned after %g s", waited);
    close(sv[0]);
    close(sv[1]);
    selector_close(sel);
}
END_TEST

START_TEST(high_fds)
{
    if (raise_nofile(4096) < 3100)
        return; /* the hard limit is too low: nothing to test */
    selector_t *sel = open_big();
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int fds[] = {fcntl(sv[0], F_DUPFD, 1500), fcntl(sv[0], F_DUPFD, 3000)};
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(selector_register(sel, fds[i], SELECTOR_READ) == 0,
                      "bigselect refused fd %d: %s", fds[i], selector_error(sel));
    }
    selector_event *ev;
    ck_assert_int_eq(wait0(sel, &ev), 0);
    ck_assert_int_eq(write(sv[1], "x", 1), 1);
    select_calls = select_max_nfds = 0;
    int n = wait0(sel, &ev);
    ck_assert_msg(select_calls > 0 && select_max_nfds > fds[1], "bigselect must wait in "
                  "select() itself, with nfds past fd %d (select() was called %d times, "
                  "nfds at most %d)", fds[1], select_calls, select_max_nfds);
    ck_assert_msg(n == 2, "fds %d and %d share a readable socket; %d reported", fds[0], fds[1], n);
    int seen = 0;
    for (int i = 0; i < n; i++)
        seen |= (ev[i].fd == fds[0]) | (ev[i].fd == fds[1]) << 1;
    ck_assert_int_eq(seen, 3);
    ck_assert_int_eq(selector_unregister(sel, fds[1]), 0);
    ck_assert_msg(wait0(sel, &ev) == 1 && ev[0].fd == fds[0], "after unregistering fd %d, "
                  "only fd %d is watched", fds[1], fds[0]);
    for (int i = 0; i < 2; i++)
        close(fds[i]);
    close(sv[0]);
    close(sv[1]);
    selector_close(sel);
}
END_TEST

enum { PAIRS = 2500 };
static int pairs[PAIRS][2];

START_TEST(thousands)
{
    raise_nofile(2 * PAIRS + 64);
    selector_t *sel = open_big();
    int npairs = 0;
    for (; npairs < PAIRS && socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[npairs]) == 0; npairs++)
        ck_assert_msg(selector_register(sel, pairs[npairs][0], SELECTOR_READ) == 0,
                      "fd %d: %s", pairs[npairs][0], selector_error(sel));
    ck_assert_int_ge(npairs, 600); /* past FD_SETSIZE in any case */
    int expected = 0;
    for (int i = 0; i < npairs; i += 11, expected++)
        ck_assert_int_eq(write(pairs[i][1], "x", 1), 1);
    selector_event *ev;
    int n = wait0(sel, &ev);
    ck_assert_msg(n == expected, "%d fds readable, %d reported", expected, n);
    for (int k = 0; k < n; k++) {
        int ok = 0;
        for (int i = 0; i < npairs && !ok; i += 11)
            ok = pairs[i][0] == ev[k].fd;
        ck_assert_msg(ok, "fd %d was reported but is not readable", ev[k].fd);
    }
    for (int i = 0; i < npairs; i++) {
        ck_assert_int_eq(selector_unregister(sel, pairs[i][0]), 0);
        close(pairs[i][0]);
        close(pairs[i][1]);
    }
    selector_close(sel);
}
END_TEST

START_TEST(closed_fd_named)
{
    selector_t *sel = open_big();
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    close(sv[0]);
    selector_event *ev;
    ck_assert_msg(selector_wait(sel, 0, &ev) == -1 && errno == EBADF,
                  "a closed registered fd must fail the wait with EBADF");
    char text[16];
    snprintf(text, sizeof text, "fd %d ", sv[0]);
    ck_assert_msg(strstr(selector_error(sel), text) != NULL, "the message must name the fd: %s",
                  selector_error(sel));
    ck_assert_int_eq(selector_unregister(sel, sv[0]), 0);
    close(sv[1]);
    selector_close(sel);
}
END_TEST

static int calls;

static void reader(loop_t *loop, void *arg)
{
    (void)loop;
    char buf[8];
    (void)!read(*(int *)arg, buf, sizeof buf);
    calls++;
}

START_TEST(through_the_loop)
{
    if (raise_nofile(2048) < 1600)
        return;
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, "bigselect"), 0);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int high = fcntl(sv[0], F_DUPFD, 1500);
    ck_assert_msg(loop_add_reader(loop, high, reader, &high) == 0, "%s", loop_error(loop));
    ck_assert_int_eq(write(sv[1], "x", 1), 1);
    calls = 0;
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(calls, 1);
    ck_assert_int_eq(loop_remove_reader(loop, high), 1);
    loop_close(loop);
    loop_free(loop);
    close(high);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("2-bigselect");
    TCase *tc = tcase_create("bigselect");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, interface);
    tcase_add_test(tc, high_fds);
    tcase_add_test(tc, thousands);
    tcase_add_test(tc, closed_fd_named);
    tcase_add_test(tc, through_the_loop);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
