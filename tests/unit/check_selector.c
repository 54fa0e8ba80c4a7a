/* check_selector.c -- every selector backend through selector.h, and the
 * loop on each of them (chapter 07).
 *
 * Each test runs once per backend of the build (Check's loop tests: _i is
 * the index in selector_backends()), so a failure names the backend.  The
 * sharp edges of chapter 07 are here: fds beyond FD_SETSIZE, a regular file
 * given to epoll, an fd closed while registered, a signal during the wait,
 * timeouts rounded up (never down) and clamped, many fds at once, and the
 * loop's promise that ready fds run in increasing fd order on every backend.
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/07-selector tests/unit/check_selector.c \
 *      build/07-selector/libloop.a $(pkg-config --cflags --libs check) -lpthread
 */
#define _GNU_SOURCE
#include "loop.h"
#include "selector.h"

#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

/* ---- helpers ----------------------------------------------------------- */

#define MAX_BACKENDS 8
static char backend_list[64];
static const char *backends[MAX_BACKENDS];
static int nbackends;

static void find_backends(void)
{
    snprintf(backend_list, sizeof backend_list, "%s", selector_backends());
    for (char *b = strtok(backend_list, " "); b != NULL && nbackends < MAX_BACKENDS;
         b = strtok(NULL, " "))
        backends[nbackends++] = b;
}

static int is(const char *backend, const char *name)
{
    return strcmp(backend, name) == 0;
}

static selector_t *open_sel(const char *name)
{
    char err[160];
    selector_t *sel = selector_open(name, err, sizeof err);
    ck_assert_msg(sel != NULL, "selector_open(\"%s\"): %s", name, err);
    ck_assert_str_eq(selector_name(sel), name);
    return sel;
}

static void make_pair(int sv[2])
{
    ck_assert_msg(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair: %s",
                  strerror(errno));
}

static void close_pair(int sv[2])
{
    close(sv[0]);
    close(sv[1]);
}

static void send_byte(int fd)
{
    ck_assert_msg(write(fd, "x", 1) == 1, "write: %s", strerror(errno));
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The events a wait(0) reports for fd; -1 if it does not report fd. */
static int events_for(selector_t *sel, int fd, int *nready)
{
    selector_event *ev;
    int n = selector_wait(sel, 0, &ev);
    ck_assert_msg(n >= 0, "%s: wait(0) failed: %s", selector_name(sel), selector_error(sel));
    if (nready != NULL)
        *nready = n;
    int found = -1;
    for (int i = 0; i < n; i++) {
        if (ev[i].fd == fd) {
            ck_assert_msg(found == -1, "%s reported fd %d twice in one wait",
                          selector_name(sel), fd);
            found = ev[i].events;
        }
    }
    return found;
}

/* Raise the soft open-files limit to at least `want` if the hard one
 * allows; return the soft limit now in force. */
static rlim_t raise_nofile(rlim_t want)
{
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    if (lim.rlim_cur < want) {
        lim.rlim_cur = lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= want ? want : lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
        getrlimit(RLIMIT_NOFILE, &lim);
    }
    return lim.rlim_cur;
}

/* ---- the interface ------------------------------------------------------ */

START_TEST(register_modify_unregister)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int sv[2];
    make_pair(sv);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    ck_assert_int_eq(selector_events_of(sel, sv[0]), SELECTOR_READ);
    ck_assert_msg(events_for(sel, sv[0], NULL) == -1,
                  "%s reported a socket with no data as ready", b);
    send_byte(sv[1]);
    ck_assert_msg(events_for(sel, sv[0], NULL) == SELECTOR_READ,
                  "%s: a socket with data must be reported readable (only)", b);
    /* Level-triggered: still unread, so reported again, and again. */
    ck_assert_msg(events_for(sel, sv[0], NULL) == SELECTOR_READ &&
                  events_for(sel, sv[0], NULL) == SELECTOR_READ,
                  "%s must be level-triggered: unread data is reported at every wait", b);
    ck_assert_int_eq(selector_modify(sel, sv[0], SELECTOR_READ | SELECTOR_WRITE), 0);
    ck_assert_msg(events_for(sel, sv[0], NULL) == (SELECTOR_READ | SELECTOR_WRITE),
                  "%s: readable and writable must come as ONE event with both bits", b);
    ck_assert_int_eq(selector_modify(sel, sv[0], SELECTOR_WRITE), 0);
    ck_assert_msg(events_for(sel, sv[0], NULL) == SELECTOR_WRITE,
                  "%s: after modify(WRITE) only WRITE may be reported", b);
    ck_assert_int_eq(selector_unregister(sel, sv[0]), 0);
    ck_assert_int_eq(selector_events_of(sel, sv[0]), 0);
    int n;
    ck_assert_msg(events_for(sel, sv[0], &n) == -1 && n == 0,
                  "%s reported an unregistered fd", b);
    close_pair(sv);
    selector_close(sel);
}
END_TEST

START_TEST(refused_arguments)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int sv[2];
    make_pair(sv);
    ck_assert_int_eq(selector_register(sel, -1, SELECTOR_READ), -1);
    ck_assert_int_eq(errno, EBADF);
    ck_assert_int_eq(selector_register(sel, sv[0], 0), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(selector_register(sel, sv[0], 4), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(selector_modify(sel, sv[0], SELECTOR_READ), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_eq(selector_unregister(sel, sv[0]), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_WRITE), -1);
    ck_assert_int_eq(errno, EEXIST);
    ck_assert_msg(selector_error(sel)[0] != '\0', "%s: no message for EEXIST", b);
    ck_assert_int_eq(selector_events_of(sel, sv[0]), SELECTOR_READ);
    close_pair(sv);
    selector_close(sel);
}
END_TEST

START_TEST(unknown_backend)
{
    char err[160];
    errno = 0;
    ck_assert_ptr_null(selector_open("devpoll-on-linux", err, sizeof err));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_msg(strstr(err, "select") != NULL, "the message should list the backends: %s", err);
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, "nope"), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_msg(strstr(loop_error(loop), "nope") != NULL, "%s", loop_error(loop));
    loop_close(loop);
    loop_free(loop);
}
END_TEST

START_TEST(default_is_first)
{
    selector_t *sel = selector_open(NULL, NULL, 0);
    ck_assert_ptr_nonnull(sel);
    ck_assert_str_eq(selector_name(sel), backends[0]);
    selector_close(sel);
#ifdef __linux__
    ck_assert_str_eq(backends[0], "epoll");
#endif
}
END_TEST

/* ---- timeouts ----------------------------------------------------------- */

START_TEST(timeout_ms_rounds_up_and_clamps)
{
    ck_assert_int_eq(selector_timeout_ms(-1), -1);
    ck_assert_int_eq(selector_timeout_ms(-0.5), -1);
    ck_assert_int_eq(selector_timeout_ms(0), 0);
    ck_assert_int_eq(selector_timeout_ms(1e-10), 1);
    ck_assert_int_eq(selector_timeout_ms(1e-4), 1);
    ck_assert_int_eq(selector_timeout_ms(0.001), 1);
    ck_assert_int_eq(selector_timeout_ms(0.0011), 2);
    ck_assert_int_eq(selector_timeout_ms(1.5), 1500);
    ck_assert_int_eq(selector_timeout_ms(86400), 86400000);
    ck_assert_int_eq(selector_timeout_ms(SELECTOR_MAX_TIMEOUT), INT_MAX);
    ck_assert_int_eq(selector_timeout_ms(1e12), INT_MAX);
    ck_assert_int_eq(selector_timeout_ms(INFINITY), INT_MAX);
}
END_TEST

/* A wait never ends before its timeout (it may end after). */
START_TEST(never_wakes_early)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int sv[2];
    make_pair(sv);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    const double timeouts[] = {1e-9, 1e-6, 1e-4, 5e-4, 1.5e-3};
    for (size_t i = 0; i < sizeof timeouts / sizeof timeouts[0]; i++) {
        selector_event *ev;
        double t0 = now();
        int n = selector_wait(sel, timeouts[i], &ev);
        double waited = now() - t0;
        ck_assert_int_eq(n, 0);
        ck_assert_msg(waited >= timeouts[i],
                      "%s: wait(%g s) returned after %g s, before its deadline: "
                      "round the timeout UP", b, timeouts[i], waited);
    }
    close_pair(sv);
    selector_close(sel);
}
END_TEST

/* A huge timeout is cut, not overflowed; a ready fd still ends the wait at
 * once.  NaN is refused. */
START_TEST(huge_and_nan_timeouts)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int sv[2];
    make_pair(sv);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    send_byte(sv[1]);
    const double huge[] = {86400.0, SELECTOR_MAX_TIMEOUT, 1e12, INFINITY};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        selector_event *ev;
        int n = selector_wait(sel, huge[i], &ev);
        ck_assert_msg(n == 1 && ev[0].fd == sv[0], "%s: wait(%g) with a ready fd returned %d: %s",
                      b, huge[i], n, selector_error(sel));
    }
    selector_event *ev;
    ck_assert_int_eq(selector_wait(sel, NAN, &ev), -1);
    ck_assert_int_eq(errno, EINVAL);
    close_pair(sv);
    selector_close(sel);
}
END_TEST

/* CPython's test_timeout_rounding: sleeps of 1e-2, 1e-4, 1e-6, 1e-8 and
 * 1e-10 s, one after the other, in at most 10 ticks.  A backend that
 * rounded a sub-millisecond timeout down to 0 ms would spin until the
 * deadline passed: hundreds of ticks. */
static const double delays[] = {1e-2, 1e-4, 1e-6, 1e-8, 1e-10};
static int next_delay, waits;

static void sleeper(loop_t *loop, void *arg)
{
    (void)arg;
    if (next_delay == (int)(sizeof delays / sizeof delays[0]))
        loop_stop(loop);
    else
        ck_assert_ptr_nonnull(loop_call_later(loop, delays[next_delay++], sleeper, NULL));
}

static double count_waits(loop_t *loop, double timeout, void *ctx)
{
    (void)loop;
    (void)ctx;
    waits++;
    return timeout;
}

START_TEST(timeout_rounding_bounds_ticks)
{
    const char *b = backends[_i];
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, b), 0);
    next_delay = waits = 0;
    loop_set_wait_hook(loop, count_waits, NULL);
    ck_assert_ptr_nonnull(loop_call_soon(loop, sleeper, NULL));
    double t0 = now();
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(waits <= 10, "%s: five short sleeps took %d ticks (at most 10: "
                  "is a sub-millisecond timeout rounded down?)", b, waits);
    ck_assert_msg(now() - t0 >= 1e-2, "%s: the 10 ms sleep ended early", b);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

/* ---- sharp edges ---------------------------------------------------------- */

static void never(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

static int file_calls;

static void file_cb(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    file_calls++;
}

/* A regular file, and what each backend promises about it:
 *   select, poll  always readable: reported at every wait, empty or not,
 *                 wherever the offset is (POSIX: regular files "shall
 *                 always poll TRUE for reading and writing");
 *   epoll         refuses it: EPERM, with a message that says why;
 *   kqueue        readable only while the file offset is before the end
 *                 of the file (EVFILT_READ on a vnode: `data` is the
 *                 number of bytes left), so an empty file never is.
 * (kqueue's branch is compiled on macOS and the BSDs only: Linux has no
 * kqueue.) */
START_TEST(regular_file)
{
    const char *b = backends[_i];
    FILE *file = tmpfile();
    ck_assert_ptr_nonnull(file);
    int fd = fileno(file);
    selector_t *sel = open_sel(b);
    int rc = selector_register(sel, fd, SELECTOR_READ);
    if (is(b, "epoll")) {
        ck_assert_msg(rc == -1 && errno == EPERM, "epoll must refuse a regular file with EPERM");
        ck_assert_msg(strstr(selector_error(sel), "regular file") != NULL,
                      "the message should say why: %s", selector_error(sel));
        ck_assert_int_eq(selector_events_of(sel, fd), 0);
    } else {
        ck_assert_msg(rc == 0, "%s: %s", b, selector_error(sel));
        int kq = is(b, "kqueue");
        /* Three bytes after the offset. */
        ck_assert_int_eq(write(fd, "abc", 3), 3);
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
        ck_assert_msg(events_for(sel, fd, NULL) == SELECTOR_READ,
                      "%s: a file with bytes after its offset must be readable", b);
        /* The offset at the end of the file. */
        ck_assert_int_eq(lseek(fd, 0, SEEK_END), 3);
        ck_assert_msg(events_for(sel, fd, NULL) == (kq ? -1 : SELECTOR_READ),
                      "%s: a file whose offset is at its end must be %s", b,
                      kq ? "NOT readable" : "readable");
        /* Empty: offset 0 is the end. */
        ck_assert_int_eq(ftruncate(fd, 0), 0);
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
        ck_assert_msg(events_for(sel, fd, NULL) == (kq ? -1 : SELECTOR_READ),
                      "%s: an empty regular file must be %s", b,
                      kq ? "NOT readable (the offset is at its end)" : "readable");
        ck_assert_int_eq(selector_unregister(sel, fd), 0);
    }
    selector_close(sel);

    /* Through the loop: loop_add_reader fails the same way, and changes
     * nothing; where it is accepted, three ticks on the empty file call
     * the reader three times (select, poll) or never (kqueue). */
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, b), 0);
    rc = loop_add_reader(loop, fd, file_cb, NULL);
    if (is(b, "epoll")) {
        ck_assert_msg(rc == -1 && errno == EPERM, "loop_add_reader(regular file) on epoll");
        ck_assert_msg(strstr(loop_error(loop), "regular file") != NULL, "%s", loop_error(loop));
        ck_assert_int_eq(loop_remove_reader(loop, fd), 0);
    } else {
        ck_assert_int_eq(rc, 0);
        file_calls = 0;
        for (int tick = 0; tick < 3; tick++) {
            loop_stop(loop);
            ck_assert_int_eq(loop_run_forever(loop), 0);
        }
        ck_assert_msg(file_calls == (is(b, "kqueue") ? 0 : 3),
                      "%s: the reader of an empty file ran %d times in 3 ticks", b, file_calls);
        ck_assert_int_eq(loop_remove_reader(loop, fd), 1);
    }
    loop_close(loop);
    loop_free(loop);
    fclose(file);
}
END_TEST

/* An fd closed while registered.  select and poll: the wait fails with
 * EBADF and names the fd.  epoll: the kernel dropped it; the wait reports
 * nothing.  Everywhere: unregistering it afterwards is not an error. */
START_TEST(closed_while_registered)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int a[2], c[2];
    make_pair(a);
    make_pair(c);
    ck_assert_int_eq(selector_register(sel, c[0], SELECTOR_READ), 0);
    ck_assert_int_eq(selector_register(sel, a[0], SELECTOR_READ), 0);
    send_byte(a[1]);
    int closed = a[0];
    close(a[0]);
    selector_event *ev;
    int n = selector_wait(sel, 0, &ev);
    if (is(b, "select") || is(b, "poll")) {
        ck_assert_msg(n == -1 && errno == EBADF, "%s: wait on a closed fd returned %d", b, n);
        char fdtext[32];
        snprintf(fdtext, sizeof fdtext, "fd %d ", closed);
        ck_assert_msg(strstr(selector_error(sel), fdtext) != NULL,
                      "%s: the message should name %s: %s", b, fdtext, selector_error(sel));
    } else {
        ck_assert_msg(n == 0, "%s: a closed fd is dropped by the kernel; wait returned %d", b, n);
    }
    ck_assert_msg(selector_unregister(sel, closed) == 0, "%s: unregister a closed fd: %s", b,
                  selector_error(sel));
    n = selector_wait(sel, 0, &ev);
    ck_assert_msg(n == 0, "%s: after unregistering the closed fd, wait returned %d (%s)", b, n,
                  n < 0 ? selector_error(sel) : "");
    close(a[1]);
    close_pair(c);
    selector_close(sel);
}
END_TEST

/* epoll: the fd number of a closed fd reused by a new socket, registered
 * again without an unregister in between (the table still says "read"):
 * modify finds the kernel's entry gone (ENOENT) and adds it instead. */
START_TEST(number_reused_after_close)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int a[2];
    make_pair(a);
    ck_assert_int_eq(selector_register(sel, a[0], SELECTOR_READ), 0);
    int num = a[0];
    close(a[0]);
    int fresh = dup(a[1]); /* the lowest free number: num */
    ck_assert_int_eq(fresh, num);
    ck_assert_msg(selector_modify(sel, num, SELECTOR_READ | SELECTOR_WRITE) == 0,
                  "%s: modify after the fd number was reused: %s", b, selector_error(sel));
    ck_assert_msg(events_for(sel, num, NULL) & SELECTOR_WRITE,
                  "%s: the new socket behind fd %d must be watched", b, num);
    ck_assert_int_eq(selector_unregister(sel, num), 0);
    close(fresh);
    close(a[1]);
    selector_close(sel);
}
END_TEST

/* Does the kernel hold a ready entry in the selector's own set?  An epoll
 * instance, like a kqueue, is itself readable when a wait on it would
 * return at once.  0 for select and poll: they have no set of their own. */
static int own_set_ready(selector_t *sel)
{
    int fd = selector_fileno(sel);
    if (fd < 0)
        return 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, 0);
    ck_assert_msg(n >= 0, "poll(selector_fileno): %s", strerror(errno));
    return n;
}

/* An fd closed while registered, while a dup() of it keeps the open file
 * alive (loop.h and selector.h: the caller's bug, and what each backend
 * does with it).  Then unregistered: from then on no backend may report
 * anything for it, and epoll's own set must hold nothing ready (else a
 * wait returns at once, reports nothing, and the loop spins: CPython's
 * EpollSelector does).  A socket registered beside it keeps working. */
START_TEST(closed_with_a_live_dup)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int a[2], c[2];
    make_pair(a);
    make_pair(c);
    int own = selector_fileno(sel);
    int w = dup(a[0]); /* the fd watched; a[0] is the dup that lives on */
    ck_assert_int_ge(w, 0);
    ck_assert_int_eq(selector_register(sel, c[0], SELECTOR_READ), 0);
    ck_assert_int_eq(selector_register(sel, w, SELECTOR_READ), 0);
    send_byte(a[1]);
    close(w); /* the bug: still registered */
    selector_event *ev;
    for (int round = 0; round < 3; round++) {
        int n = selector_wait(sel, 0, &ev);
        if (is(b, "select") || is(b, "poll")) {
            ck_assert_msg(n == -1 && errno == EBADF, "%s: wait on a closed fd returned %d", b, n);
        } else if (is(b, "epoll")) {
            /* The open file is still in the set, under the old number. */
            ck_assert_msg(n == 1 && ev[0].fd == w && ev[0].events == SELECTOR_READ,
                          "epoll: a closed fd whose file lives on is reported as before "
                          "(wait %d returned %d)", round, n);
        } else {
            ck_assert_msg(n == 0, "%s: close() drops the fd's knotes; wait returned %d", b, n);
        }
    }
    ck_assert_msg(selector_unregister(sel, w) == 0, "%s: unregister a closed fd: %s", b,
                  selector_error(sel));
    for (int round = 0; round < 3; round++) {
        int n = selector_wait(sel, 0, &ev);
        ck_assert_msg(n == 0, "%s: after unregistering the closed fd, wait %d returned %d (%s)",
                      b, round, n, n < 0 ? selector_error(sel) : "");
        ck_assert_msg(!own_set_ready(sel),
                      "%s: after unregistering the closed fd, the kernel's set still holds "
                      "it, ready: every wait returns at once (wait %d)", b, round);
    }
    ck_assert_int_eq(selector_fileno(sel), own); /* the same number throughout */
    send_byte(c[1]);
    ck_assert_msg(events_for(sel, c[0], NULL) == SELECTOR_READ,
                  "%s: the other socket must still be watched", b);
    close_pair(a);
    close_pair(c);
    selector_close(sel);
}
END_TEST

/* epoll: when the new instance cannot be made (here: no fd left, EMFILE),
 * the wait says so -- -1, the errno, a message -- instead of spinning on
 * the stale entry; once an fd is free again, the next wait replaces the
 * instance and the selector carries on. */
START_TEST(rebuild_fails_loudly)
{
    const char *b = backends[_i];
    if (!is(b, "epoll"))
        return;
    selector_t *sel = open_sel(b);
    int a[2];
    make_pair(a);
    int w = dup(a[0]);
    ck_assert_int_ge(w, 0);
    ck_assert_int_eq(selector_register(sel, w, SELECTOR_READ), 0);
    send_byte(a[1]);
    close(w);
    ck_assert_int_eq(selector_unregister(sel, w), 0);
    /* No fd left: the soft limit at the lowest free number. */
    struct rlimit saved, none;
    getrlimit(RLIMIT_NOFILE, &saved);
    none = saved;
    none.rlim_cur = (rlim_t)w; /* w is the lowest free number again */
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &none), 0);
    selector_event *ev;
    int n = selector_wait(sel, 0, &ev);
    int err = errno;
    setrlimit(RLIMIT_NOFILE, &saved);
    ck_assert_msg(n == -1 && err == EMFILE, "epoll: the wait should fail with EMFILE, "
                  "returned %d (%s)", n, selector_error(sel));
    ck_assert_msg(strstr(selector_error(sel), "closed fd") != NULL, "%s", selector_error(sel));
    ck_assert_int_eq(selector_wait(sel, 0, &ev), 0);
    ck_assert_msg(!own_set_ready(sel), "epoll: the stale entry outlived the rebuild");
    close_pair(a);
    selector_close(sel);
}
END_TEST

/* epoll: an entry the selector did not make -- here added behind its back;
 * in a program, one left by a closed fd -- is reported for an fd that is
 * not registered.  The wait must not report it, and the wait after it must
 * start on a set without it, so that it cannot make every wait return at
 * once.  (select and poll have no set of their own; a kqueue's entries die
 * with their fd.) */
START_TEST(unknown_fd_reported)
{
    const char *b = backends[_i];
#ifdef __linux__
    if (!is(b, "epoll"))
        return;
    selector_t *sel = open_sel(b);
    int a[2], c[2];
    make_pair(a);
    make_pair(c);
    ck_assert_int_eq(selector_register(sel, c[0], SELECTOR_READ), 0);
    struct epoll_event e = {.events = EPOLLIN, .data.fd = a[0]};
    ck_assert_int_eq(epoll_ctl(selector_fileno(sel), EPOLL_CTL_ADD, a[0], &e), 0);
    send_byte(a[1]);
    int n = 0;
    ck_assert_msg(events_for(sel, a[0], &n) == -1 && n == 0,
                  "epoll reported fd %d, which is not registered", a[0]);
    ck_assert_msg(events_for(sel, a[0], &n) == -1 && n == 0,
                  "epoll reported fd %d, which is not registered", a[0]);
    ck_assert_msg(!own_set_ready(sel),
                  "epoll: an entry for an fd that is not registered stays in the set, "
                  "ready: every wait returns at once");
    send_byte(c[1]);
    ck_assert_int_eq(events_for(sel, c[0], NULL), SELECTOR_READ);
    close_pair(a);
    close_pair(c);
    selector_close(sel);
#else
    (void)b;
#endif
}
END_TEST

/* The selector's own fd (epoll's instance, the kqueue) is refused. */
START_TEST(own_fd_refused)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int own = selector_fileno(sel);
    if (is(b, "select") || is(b, "poll")) {
        ck_assert_int_eq(own, -1);
    } else {
        ck_assert_int_ge(own, 0);
        ck_assert_int_eq(selector_register(sel, own, SELECTOR_READ), -1);
        ck_assert_int_eq(errno, EINVAL);
        ck_assert_msg(strstr(selector_error(sel), "own fd") != NULL, "%s: %s", b,
                      selector_error(sel));
        ck_assert_int_eq(selector_events_of(sel, own), 0);
    }
    selector_close(sel);
}
END_TEST

/* EINTR: a signal ends the wait with -1 and errno EINTR (not resumed). */
static void on_usr1(int sig)
{
    (void)sig;
}

static void *signal_later(void *arg)
{
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    pthread_kill(*(pthread_t *)arg, SIGUSR1);
    return NULL;
}

START_TEST(eintr)
{
    const char *b = backends[_i];
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1; /* no SA_RESTART */
    sigaction(SIGUSR1, &sa, &old);
    selector_t *sel = open_sel(b);
    int sv[2];
    make_pair(sv);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    pthread_t self = pthread_self(), t;
    ck_assert_int_eq(pthread_create(&t, NULL, signal_later, &self), 0);
    selector_event *ev;
    double t0 = now();
    int n = selector_wait(sel, 5.0, &ev);
    int err = errno;
    pthread_join(t, NULL);
    sigaction(SIGUSR1, &old, NULL);
    ck_assert_msg(n == -1 && err == EINTR, "%s: a signal during the wait: returned %d, errno %d",
                  b, n, err);
    ck_assert_msg(now() - t0 < 4.0, "%s: the wait was resumed after the signal", b);
    close_pair(sv);
    selector_close(sel);
}
END_TEST

/* Many fds: 2000 socketpairs (fewer if the open-files limit is lower, and
 * only those below FD_SETSIZE for select); every 7th made readable; one
 * wait must report exactly those, each once. */
START_TEST(many_fds)
{
    const char *b = backends[_i];
    enum { PAIRS = 2000 };
    raise_nofile(2 * PAIRS + 64);
    selector_t *sel = open_sel(b);
    static int pairs[PAIRS][2];
    int npairs = 0, registered = 0, refused = 0;
    for (; npairs < PAIRS; npairs++) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[npairs]) < 0)
            break;
        if (selector_register(sel, pairs[npairs][0], SELECTOR_READ) == 0) {
            registered++;
        } else {
            ck_assert_msg(is(b, "select") && pairs[npairs][0] >= FD_SETSIZE && errno == EINVAL,
                          "%s refused fd %d: %s", b, pairs[npairs][0], selector_error(sel));
            refused++;
        }
    }
    ck_assert_msg(npairs >= 500, "only %d socketpairs could be made", npairs);
    ck_assert_msg(!is(b, "select") || registered < FD_SETSIZE, "select registered %d fds", registered);
    ck_assert_msg(is(b, "select") || refused == 0, "%s refused %d fds", b, refused);
    int expected = 0;
    for (int i = 0; i < npairs; i += 7) {
        send_byte(pairs[i][1]);
        expected += selector_events_of(sel, pairs[i][0]) != 0;
    }
    selector_event *ev;
    int n = selector_wait(sel, 0, &ev);
    ck_assert_msg(n == expected, "%s: %d fds ready, wait reported %d", b, expected, n);
    for (int k = 0; k < n; k++) {
        int fd = ev[k].fd, found = 0;
        for (int i = 0; i < npairs && !found; i += 7)
            found = pairs[i][0] == fd;
        ck_assert_msg(found && ev[k].events == SELECTOR_READ, "%s reported fd %d (events %d)",
                      b, fd, ev[k].events);
    }
    for (int i = 0; i < npairs; i++) {
        if (selector_events_of(sel, pairs[i][0]) != 0)
            ck_assert_int_eq(selector_unregister(sel, pairs[i][0]), 0);
        close_pair(pairs[i]);
    }
    selector_close(sel);
}
END_TEST

/* Two rules make mutate found untested (07-select-maxfd,
 * 07-poll-hangup-writer-only): a newly watched fd just above the highest
 * one is watched too (the two ends of a socketpair are consecutive fds), and
 * a peer that hangs up wakes a reader, so that its read() sees the end.  A
 * pipe whose write end is closed gives poll() POLLHUP without POLLIN. */
START_TEST(consecutive_fds_and_a_hangup)
{
    const char *b = backends[_i];
    selector_t *sel = open_sel(b);
    int sv[2];
    make_pair(sv);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    ck_assert_int_eq(selector_register(sel, sv[1], SELECTOR_READ), 0);
    send_byte(sv[0]);
    send_byte(sv[1]);
    ck_assert_msg(events_for(sel, sv[0], NULL) == SELECTOR_READ,
                  "%s: fd %d has data, and was not reported", b, sv[0]);
    ck_assert_msg(events_for(sel, sv[1], NULL) == SELECTOR_READ,
                  "%s: fd %d, registered after fd %d, has data, and was not reported", b,
                  sv[1], sv[0]);
    ck_assert_int_eq(selector_unregister(sel, sv[0]), 0);
    ck_assert_int_eq(selector_unregister(sel, sv[1]), 0);
    close_pair(sv);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(selector_register(sel, p[0], SELECTOR_READ), 0);
    ck_assert_msg(events_for(sel, p[0], NULL) == -1, "%s: an empty pipe reported ready", b);
    close(p[1]);
    ck_assert_msg(events_for(sel, p[0], NULL) == SELECTOR_READ,
                  "%s: the write end of a pipe was closed, and its reader was not "
                  "woken to read the end", b);
    ck_assert_int_eq(selector_unregister(sel, p[0]), 0);
    close(p[0]);
    selector_close(sel);
}
END_TEST

/* ---- the loop on each backend ------------------------------------------ */

static int order[16], norder;

static void record_fd(loop_t *loop, void *arg)
{
    (void)loop;
    int fd = (int)(long)arg;
    char buf[8];
    (void)!read(fd, buf, sizeof buf);
    order[norder++] = fd;
}

/* Whatever order the kernel reports them in (epoll: the order they became
 * ready), ready fds are called in increasing fd order. */
START_TEST(loop_runs_ready_fds_in_fd_order)
{
    const char *b = backends[_i];
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, b), 0);
    int p[6][2];
    for (int i = 0; i < 6; i++) {
        make_pair(p[i]);
        ck_assert_int_eq(loop_add_reader(loop, p[i][0], record_fd, (void *)(long)p[i][0]), 0);
    }
    norder = 0;
    for (int i = 5; i >= 0; i -= 2) /* 5, 3, 1 ready first ... */
        send_byte(p[i][1]);
    for (int i = 4; i >= 0; i -= 2) /* ... then 4, 2, 0 */
        send_byte(p[i][1]);
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(norder, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(order[i] == p[i][0], "%s: call %d was fd %d, expected fd %d (fd order)",
                      b, i, order[i], p[i][0]);
    for (int i = 0; i < 6; i++)
        close_pair(p[i]);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

/* The same with just two ready fds, the higher one ready first: the
 * smallest batch the loop must sort (make mutate's 07-sort-off-by-one sorts
 * only from three on, and survived the test above). */
START_TEST(two_ready_fds_in_fd_order)
{
    const char *b = backends[_i];
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, b), 0);
    int p[2][2];
    for (int i = 0; i < 2; i++) {
        make_pair(p[i]);
        ck_assert_int_eq(loop_add_reader(loop, p[i][0], record_fd, (void *)(long)p[i][0]), 0);
    }
    norder = 0;
    send_byte(p[1][1]); /* the higher fd first */
    send_byte(p[0][1]);
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(norder, 2);
    ck_assert_msg(order[0] == p[0][0] && order[1] == p[1][0],
                  "%s: fds %d then %d were called, expected %d then %d (fd order)", b,
                  order[0], order[1], p[0][0], p[1][0]);
    for (int i = 0; i < 2; i++)
        close_pair(p[i]);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

static int high_calls;

static void high_cb(loop_t *loop, void *arg)
{
    (void)loop;
    char buf[8];
    (void)!read((int)(long)arg, buf, sizeof buf);
    high_calls++;
}

/* fd 1500: select refuses it with chapter 01's message, the others watch
 * it; and a loop that watches it cannot be moved to select. */
START_TEST(loop_high_fd)
{
    const char *b = backends[_i];
    if (raise_nofile(2048) < 1600)
        return; /* the hard limit is too low to open fd 1500: nothing to test */
    int sv[2];
    make_pair(sv);
    int high = fcntl(sv[0], F_DUPFD, 1500);
    ck_assert_int_ge(high, 1500);
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, b), 0);
    int rc = loop_add_reader(loop, high, high_cb, (void *)(long)high);
    if (is(b, "select")) {
        ck_assert_msg(rc == -1 && errno == EINVAL, "select must refuse fd %d", high);
        ck_assert_msg(strstr(loop_error(loop), "FD_SETSIZE") != NULL, "%s", loop_error(loop));
    } else {
        ck_assert_msg(rc == 0, "%s refused fd %d: %s", b, high, loop_error(loop));
        high_calls = 0;
        send_byte(sv[1]);
        loop_stop(loop);
        ck_assert_int_eq(loop_run_forever(loop), 0);
        ck_assert_int_eq(high_calls, 1);
        /* Moving to select would lose the watch: refused, nothing changes. */
        ck_assert_int_eq(loop_set_backend(loop, "select"), -1);
        ck_assert_str_eq(loop_backend(loop), b);
        send_byte(sv[1]);
        loop_stop(loop);
        ck_assert_int_eq(loop_run_forever(loop), 0);
        ck_assert_int_eq(high_calls, 2);
        ck_assert_int_eq(loop_remove_reader(loop, high), 1);
    }
    loop_close(loop);
    loop_free(loop);
    close(high);
    close_pair(sv);
}
END_TEST

static int dup_calls, dup_ticks;

static void dup_cb(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    dup_calls++;
}

static double count_ticks(loop_t *loop, double timeout, void *ctx)
{
    (void)loop;
    (void)ctx;
    dup_ticks++;
    return timeout; /* observe only: the selector really waits */
}

static void stop_cb(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* The loop, the fd closed while its reader is registered and a dup() of it
 * lives on (loop.h: the caller's bug).  Five ticks: select and poll fail,
 * epoll runs the reader at every tick (the kernel still reports the open
 * file), kqueue forgets the fd.  Then loop_remove_reader(): the loop must
 * block again.  Ticks are counted by a wait hook, over a 10 ms timer: a
 * loop that blocks takes 2 ticks, one that spins thousands. */
START_TEST(loop_closed_with_a_live_dup)
{
    const char *b = backends[_i];
    loop_t *loop = loop_new();
    ck_assert_int_eq(loop_set_backend(loop, b), 0);
    int a[2];
    make_pair(a);
    int w = dup(a[0]);
    ck_assert_int_ge(w, 0);
    dup_calls = 0;
    ck_assert_int_eq(loop_add_reader(loop, w, dup_cb, NULL), 0);
    send_byte(a[1]);
    close(w); /* the bug: the reader is still registered */
    for (int tick = 0; tick < 5; tick++) {
        loop_stop(loop);
        int rc = loop_run_forever(loop);
        if (is(b, "select") || is(b, "poll"))
            ck_assert_msg(rc == -1 && errno == EBADF, "%s: tick %d returned %d", b, tick, rc);
        else
            ck_assert_msg(rc == 0, "%s: tick %d: %s", b, tick, loop_error(loop));
    }
    int expected = is(b, "epoll") ? 5 : 0;
    ck_assert_msg(dup_calls == expected, "%s: the reader of the closed fd ran %d times in "
                  "5 ticks, expected %d", b, dup_calls, expected);
    ck_assert_int_eq(loop_remove_reader(loop, w), 1);
    dup_calls = dup_ticks = 0;
    loop_set_wait_hook(loop, count_ticks, NULL);
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.01, stop_cb, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(dup_ticks <= 3 && dup_calls == 0,
                  "%s: after loop_remove_reader the loop spun: %d ticks (%d calls) while "
                  "waiting for a 10 ms timer", b, dup_ticks, dup_calls);
    close_pair(a);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

/* The loop refuses to watch its own selector's fd.  (The lowest free
 * number before loop_set_backend() is the one the new selector gets.) */
START_TEST(loop_own_selector_fd)
{
    const char *b = backends[_i];
    selector_t *probe_sel = open_sel(b);
    int has_fd = selector_fileno(probe_sel) >= 0;
    selector_close(probe_sel);
    if (!has_fd)
        return; /* select and poll have no fd of their own */
    loop_t *loop = loop_new();
    int lowest = dup(0);
    ck_assert_int_ge(lowest, 0);
    close(lowest);
    ck_assert_int_eq(loop_set_backend(loop, b), 0);
    ck_assert_int_eq(loop_add_reader(loop, lowest, never, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_msg(strstr(loop_error(loop), "own") != NULL, "%s: %s", b, loop_error(loop));
    ck_assert_int_eq(loop_remove_reader(loop, lowest), 0);
    loop_close(loop);
    loop_free(loop);
}
END_TEST

/* loop_set_backend moves every watch to the new selector. */
START_TEST(loop_moves_between_backends)
{
    loop_t *loop = loop_new();
    int sv[2];
    make_pair(sv);
    high_calls = 0;
    ck_assert_int_eq(loop_add_reader(loop, sv[0], high_cb, (void *)(long)sv[0]), 0);
    for (int i = 0; i < nbackends; i++) {
        ck_assert_int_eq(loop_set_backend(loop, backends[i]), 0);
        ck_assert_str_eq(loop_backend(loop), backends[i]);
        send_byte(sv[1]);
        loop_stop(loop);
        ck_assert_int_eq(loop_run_forever(loop), 0);
        ck_assert_msg(high_calls == i + 1, "after moving to %s the reader was not called",
                      backends[i]);
    }
    loop_close(loop);
    ck_assert_int_eq(loop_set_backend(loop, "poll"), -1); /* closed */
    loop_free(loop);
    close_pair(sv);
}
END_TEST

static Suite *selector_suite(void)
{
    Suite *s = suite_create("selector");
    TCase *api = tcase_create("interface");
    tcase_add_loop_test(api, register_modify_unregister, 0, nbackends);
    tcase_add_loop_test(api, refused_arguments, 0, nbackends);
    tcase_add_test(api, unknown_backend);
    tcase_add_test(api, default_is_first);
    suite_add_tcase(s, api);

    TCase *timeouts = tcase_create("timeouts");
    tcase_add_test(timeouts, timeout_ms_rounds_up_and_clamps);
    tcase_add_loop_test(timeouts, never_wakes_early, 0, nbackends);
    tcase_add_loop_test(timeouts, huge_and_nan_timeouts, 0, nbackends);
    tcase_add_loop_test(timeouts, timeout_rounding_bounds_ticks, 0, nbackends);
    suite_add_tcase(s, timeouts);

    TCase *edges = tcase_create("sharp_edges");
    tcase_set_timeout(edges, 30);
    tcase_add_loop_test(edges, regular_file, 0, nbackends);
    tcase_add_loop_test(edges, closed_while_registered, 0, nbackends);
    tcase_add_loop_test(edges, number_reused_after_close, 0, nbackends);
    tcase_add_loop_test(edges, closed_with_a_live_dup, 0, nbackends);
    tcase_add_loop_test(edges, unknown_fd_reported, 0, nbackends);
    tcase_add_loop_test(edges, rebuild_fails_loudly, 0, nbackends);
    tcase_add_loop_test(edges, own_fd_refused, 0, nbackends);
    tcase_add_loop_test(edges, eintr, 0, nbackends);
    tcase_add_loop_test(edges, consecutive_fds_and_a_hangup, 0, nbackends);
    tcase_add_loop_test(edges, many_fds, 0, nbackends);
    suite_add_tcase(s, edges);

    TCase *loop = tcase_create("loop");
    tcase_add_loop_test(loop, loop_runs_ready_fds_in_fd_order, 0, nbackends);
    tcase_add_loop_test(loop, two_ready_fds_in_fd_order, 0, nbackends);
    tcase_add_loop_test(loop, loop_high_fd, 0, nbackends);
    tcase_add_loop_test(loop, loop_closed_with_a_live_dup, 0, nbackends);
    tcase_add_loop_test(loop, loop_own_selector_fd, 0, nbackends);
    tcase_add_test(loop, loop_moves_between_backends);
    suite_add_tcase(s, loop);
    return s;
}

int main(void)
{
    find_backends();
    return run_suite(selector_suite());
}
