/* check_io.c -- the I/O registration rules of the loop (chapter 01).
 *
 * Written against chapter 01's loop.h and run against every later stage
 * (tests/suites.mk), so it uses nothing but the functions declared there:
 * loop_new, loop_add_reader / loop_add_writer, loop_remove_reader /
 * loop_remove_writer, loop_run_forever, loop_stop, loop_close, loop_free and
 * loop_error.  Every socket is one end of an AF_UNIX socketpair; nothing
 * touches the network.
 *
 * One tick on demand: loop_stop() before loop_run_forever() makes the run one
 * tick long and that tick does not block (asyncio's timeout 0 when
 * `_stopping` is set).  Most tests drive the loop that way, so a broken loop
 * makes a test fail instead of hang.
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/NN-slug tests/unit/check_io.c build/NN-slug/libloop.a \
 *      $(pkg-config --cflags --libs check) -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ----------------------------------------------------------- */

/* What a callback saw.  `stop_at`: call loop_stop() on that call (0: never).
 * `drain`: read the fd's pending bytes, so that it is not ready again. */
struct probe {
    int calls;
    loop_t *loop_seen;
    int fd;
    int stop_at;
    int drain;
    int order; /* the global call counter when this probe was last called */
};

static int call_counter;

static void probe_cb(loop_t *loop, void *arg)
{
    struct probe *p = arg;
    p->calls++;
    p->loop_seen = loop;
    p->order = ++call_counter;
    if (p->drain) {
        char buf[256];
        (void)!read(p->fd, buf, sizeof buf);
    }
    if (p->stop_at != 0 && p->calls == p->stop_at)
        loop_stop(loop);
}

static void make_pair(int sv[2])
{
    ck_assert_msg(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0,
                  "socketpair failed: %s", strerror(errno));
}

static void close_pair(int sv[2])
{
    close(sv[0]);
    close(sv[1]);
}

static void send_byte(int fd)
{
    ck_assert_msg(write(fd, "x", 1) == 1, "write to a socketpair failed: %s",
                  strerror(errno));
}

/* Run exactly one non-blocking tick. */
static void one_tick(loop_t *loop)
{
    loop_stop(loop);
    ck_assert_msg(loop_run_forever(loop) == 0,
                  "loop_run_forever() after loop_stop() returned -1: %s",
                  loop_error(loop));
}

static loop_t *new_loop(void)
{
    loop_t *loop = loop_new();
    ck_assert_msg(loop != NULL, "loop_new() returned NULL");
    return loop;
}

static void free_loop(loop_t *loop)
{
    ck_assert_msg(loop_close(loop) == 0, "loop_close() failed: %s",
                  loop_error(loop));
    loop_free(loop);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* ---- add / replace / remove -------------------------------------------- */

START_TEST(reader_called_when_readable)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct probe p = {.fd = sv[1], .drain = 1};
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &p), 0);
    one_tick(loop);
    ck_assert_msg(p.calls == 0,
                  "the reader of an fd with no data was called %d time(s); "
                  "call back only fds that select() reported", p.calls);
    send_byte(sv[0]);
    one_tick(loop);
    ck_assert_msg(p.calls == 1, "the reader of a readable fd was called %d "
                  "time(s) in one tick, expected 1", p.calls);
    ck_assert_msg(p.loop_seen == loop,
                  "the callback did not receive the loop that ran it");
    close_pair(sv);
    free_loop(loop);
}
END_TEST

START_TEST(only_ready_fds_called)
{
    loop_t *loop = new_loop();
    int a[2], b[2], c[2];
    make_pair(a);
    make_pair(b);
    make_pair(c);
    struct probe pa = {.fd = a[1], .drain = 1}, pb = {.fd = b[1], .drain = 1},
                 pc = {.fd = c[1], .drain = 1};
    ck_assert_int_eq(loop_add_reader(loop, a[1], probe_cb, &pa), 0);
    ck_assert_int_eq(loop_add_reader(loop, b[1], probe_cb, &pb), 0);
    ck_assert_int_eq(loop_add_reader(loop, c[1], probe_cb, &pc), 0);
    send_byte(b[0]);
    one_tick(loop);
    ck_assert_msg(pa.calls == 0 && pb.calls == 1 && pc.calls == 0,
                  "only the middle fd had data, but the calls were "
                  "%d, %d, %d (expected 0, 1, 0)", pa.calls, pb.calls, pc.calls);
    close_pair(a);
    close_pair(b);
    close_pair(c);
    free_loop(loop);
}
END_TEST

START_TEST(add_reader_replaces)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct probe first = {.fd = sv[1], .drain = 1};
    struct probe second = {.fd = sv[1], .drain = 1};
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &first), 0);
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &second), 0);
    send_byte(sv[0]);
    one_tick(loop);
    ck_assert_msg(first.calls == 0 && second.calls == 1,
                  "adding a second reader to one fd must replace the first "
                  "(as asyncio's add_reader does); calls: first %d, second %d",
                  first.calls, second.calls);
    ck_assert_msg(loop_remove_reader(loop, sv[1]) == 1,
                  "remove_reader after two add_reader: expected 1 (one reader)");
    ck_assert_msg(loop_remove_reader(loop, sv[1]) == 0,
                  "the second remove_reader must find nothing (0)");
    close_pair(sv);
    free_loop(loop);
}
END_TEST

START_TEST(remove_reader)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct probe p = {.fd = sv[1]};
    ck_assert_msg(loop_remove_reader(loop, sv[1]) == 0,
                  "remove_reader of an fd never watched must return 0");
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &p), 0);
    ck_assert_msg(loop_remove_reader(loop, sv[1]) == 1,
                  "remove_reader of a watched fd must return 1");
    ck_assert_msg(loop_remove_reader(loop, sv[1]) == 0,
                  "remove_reader twice: the second must return 0");
    send_byte(sv[0]);
    one_tick(loop);
    ck_assert_msg(p.calls == 0, "a removed reader was called %d time(s)",
                  p.calls);
    close_pair(sv);
    free_loop(loop);
}
END_TEST

START_TEST(writer_add_replace_remove)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    /* A fresh socket has room in its send buffer: it is writable at once. */
    struct probe first = {.fd = sv[0]}, second = {.fd = sv[0]};
    ck_assert_msg(loop_remove_writer(loop, sv[0]) == 0,
                  "remove_writer of an fd never watched must return 0");
    ck_assert_int_eq(loop_add_writer(loop, sv[0], probe_cb, &first), 0);
    one_tick(loop);
    ck_assert_msg(first.calls == 1, "the writer of a writable socket was "
                  "called %d time(s) in one tick, expected 1", first.calls);
    ck_assert_int_eq(loop_add_writer(loop, sv[0], probe_cb, &second), 0);
    one_tick(loop);
    ck_assert_msg(first.calls == 1 && second.calls == 1,
                  "add_writer on a watched fd must replace the writer; calls: "
                  "first %d (expected 1), second %d (expected 1)",
                  first.calls, second.calls);
    ck_assert_msg(loop_remove_writer(loop, sv[0]) == 1,
                  "remove_writer of a watched fd must return 1");
    ck_assert_msg(loop_remove_writer(loop, sv[0]) == 0,
                  "remove_writer twice: the second must return 0");
    one_tick(loop);
    ck_assert_msg(second.calls == 1, "a removed writer was called again");
    close_pair(sv);
    free_loop(loop);
}
END_TEST

/* One fd with both a reader and a writer: each is its own registration,
 * both are called when both are ready, reader first (asyncio's
 * _process_events queues the reader's handle, then the writer's), and
 * removing one leaves the other. */
START_TEST(reader_and_writer_on_one_fd)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct probe r = {.fd = sv[1], .drain = 1}, w = {.fd = sv[1]};
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &r), 0);
    ck_assert_int_eq(loop_add_writer(loop, sv[1], probe_cb, &w), 0);
    send_byte(sv[0]);
    call_counter = 0;
    one_tick(loop);
    ck_assert_msg(r.calls == 1 && w.calls == 1,
                  "fd both readable and writable: reader called %d, writer %d "
                  "time(s), expected 1 and 1", r.calls, w.calls);
    ck_assert_msg(r.order < w.order, "the reader must run before the writer "
                  "of the same fd, as in asyncio's _process_events");
    ck_assert_int_eq(loop_remove_writer(loop, sv[1]), 1);
    send_byte(sv[0]);
    one_tick(loop);
    ck_assert_msg(r.calls == 2 && w.calls == 1,
                  "after remove_writer the reader must still be called "
                  "(reader %d, writer %d; expected 2, 1)", r.calls, w.calls);
    ck_assert_int_eq(loop_add_writer(loop, sv[1], probe_cb, &w), 0);
    ck_assert_int_eq(loop_remove_reader(loop, sv[1]), 1);
    send_byte(sv[0]);
    one_tick(loop);
    ck_assert_msg(r.calls == 2 && w.calls == 2,
                  "after remove_reader the writer must still be called "
                  "(reader %d, writer %d; expected 2, 2)", r.calls, w.calls);
    close_pair(sv);
    free_loop(loop);
}
END_TEST

/* ---- removing from inside callbacks ------------------------------------ */

struct remover {
    int calls;
    int other_fd; /* the fd whose reader this callback removes */
    int own_fd;
    int removed_rc;
};

static void remove_other_cb(loop_t *loop, void *arg)
{
    struct remover *r = arg;
    r->calls++;
    r->removed_rc = loop_remove_reader(loop, r->other_fd);
}

/* Two fds ready in the same tick; whichever callback runs first removes the
 * other's reader.  The other must then not be called, although select()
 * reported its fd: asyncio cancels the handle, and a cancelled handle never
 * runs.  Written without assuming which fd is dispatched first. */
START_TEST(remove_other_in_same_tick)
{
    loop_t *loop = new_loop();
    int a[2], b[2];
    make_pair(a);
    make_pair(b);
    struct remover ra = {.other_fd = b[1], .own_fd = a[1]};
    struct remover rb = {.other_fd = a[1], .own_fd = b[1]};
    ck_assert_int_eq(loop_add_reader(loop, a[1], remove_other_cb, &ra), 0);
    ck_assert_int_eq(loop_add_reader(loop, b[1], remove_other_cb, &rb), 0);
    send_byte(a[0]);
    send_byte(b[0]);
    one_tick(loop);
    ck_assert_msg(ra.calls + rb.calls == 1,
                  "both fds were ready and the first callback removed the "
                  "other's reader, yet %d callbacks ran (expected 1): check the "
                  "watch table again right before each call",
                  ra.calls + rb.calls);
    struct remover *ran = ra.calls ? &ra : &rb;
    ck_assert_msg(ran->removed_rc == 1,
                  "remove_reader of the other (still watched) fd returned %d, "
                  "expected 1", ran->removed_rc);
    close_pair(a);
    close_pair(b);
    free_loop(loop);
}
END_TEST

static void remove_self_cb(loop_t *loop, void *arg)
{
    struct remover *r = arg;
    r->calls++;
    r->removed_rc = loop_remove_reader(loop, r->own_fd);
}

START_TEST(remove_self_inside_callback)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct remover r = {.own_fd = sv[1]};
    ck_assert_int_eq(loop_add_reader(loop, sv[1], remove_self_cb, &r), 0);
    send_byte(sv[0]); /* never read: the fd stays readable */
    one_tick(loop);
    ck_assert_msg(r.calls == 1 && r.removed_rc == 1,
                  "a callback removing its own reader: calls %d (expected 1), "
                  "remove_reader returned %d (expected 1)", r.calls, r.removed_rc);
    one_tick(loop);
    one_tick(loop);
    ck_assert_msg(r.calls == 1, "a reader that removed itself was called "
                  "again (%d calls) although its fd is still readable", r.calls);
    close_pair(sv);
    free_loop(loop);
}
END_TEST

/* A callback may add a reader to another fd; it is watched from the next
 * tick on. */
struct adder {
    int calls;
    int fd;
    struct probe *probe;
};

static void add_other_cb(loop_t *loop, void *arg)
{
    struct adder *a = arg;
    a->calls++;
    ck_assert_int_eq(loop_add_reader(loop, a->fd, probe_cb, a->probe), 0);
}

START_TEST(add_inside_callback)
{
    loop_t *loop = new_loop();
    int a[2], b[2];
    make_pair(a);
    make_pair(b);
    struct probe later = {.fd = b[1], .drain = 1};
    struct adder ad = {.fd = b[1], .probe = &later};
    ck_assert_int_eq(loop_add_reader(loop, a[1], add_other_cb, &ad), 0);
    send_byte(a[0]);
    send_byte(b[0]);
    one_tick(loop);
    ck_assert_int_eq(loop_remove_reader(loop, a[1]), 1);
    one_tick(loop);
    ck_assert_msg(ad.calls == 1 && later.calls == 1,
                  "a reader added from inside a callback must be watched by "
                  "the following ticks (adder %d, added %d; expected 1, 1)",
                  ad.calls, later.calls);
    close_pair(a);
    close_pair(b);
    free_loop(loop);
}
END_TEST

/* ---- refused arguments -------------------------------------------------- */

/* A refused call: -1, the errno loop.h gives, and a message that says why
 * (it contains `says`), so that a refusal for the wrong reason -- another
 * check that happens to catch the argument -- fails the test. */
static void expect_refused(loop_t *loop, int rc, int err, const char *says, const char *call)
{
    int saved = errno;
    ck_assert_msg(rc == -1, "%s returned %d, expected -1", call, rc);
    ck_assert_msg(saved == err, "%s set errno %d (%s), expected %d (%s)", call,
                  saved, strerror(saved), err, strerror(err));
    ck_assert_msg(loop_error(loop) != NULL && strstr(loop_error(loop), says) != NULL,
                  "%s: loop_error() says \"%s\", expected a message with \"%s\"", call,
                  loop_error(loop), says);
}

START_TEST(negative_fd_refused)
{
    loop_t *loop = new_loop();
    struct probe p = {0};
    expect_refused(loop, loop_add_reader(loop, -1, probe_cb, &p), EBADF,
                   "not a file descriptor", "add_reader(-1)");
    expect_refused(loop, loop_add_writer(loop, -5, probe_cb, &p), EBADF,
                   "not a file descriptor", "add_writer(-5)");
    errno = 0;
    expect_refused(loop, loop_remove_reader(loop, -1), EBADF, "not a file descriptor",
                   "remove_reader(-1)");
    errno = 0;
    expect_refused(loop, loop_remove_writer(loop, -2), EBADF, "not a file descriptor",
                   "remove_writer(-2)");
    free_loop(loop);
}
END_TEST

/* select() watches fds through an fd_set of FD_SETSIZE bits: FD_SET with a
 * larger fd writes past its end.  The loop must refuse such an fd. */
START_TEST(fd_setsize_refused)
{
    loop_t *loop = new_loop();
#ifdef LOOP_HAS_BACKENDS
    /* From chapter 07 on, only the select backend has this limit: poll,
     * epoll and kqueue watch fds above it (check_selector.c tests that). */
    if (strcmp(loop_backend(loop), "select") != 0) {
        free_loop(loop);
        return;
    }
#endif
    struct probe p = {0};
    expect_refused(loop, loop_add_reader(loop, FD_SETSIZE, probe_cb, &p),
                   EINVAL, "FD_SETSIZE", "add_reader(FD_SETSIZE)");
    expect_refused(loop, loop_add_writer(loop, FD_SETSIZE + 500, probe_cb, &p),
                   EINVAL, "FD_SETSIZE", "add_writer(FD_SETSIZE + 500)");
    errno = 0;
    expect_refused(loop, loop_remove_reader(loop, FD_SETSIZE), EINVAL, "FD_SETSIZE",
                   "remove_reader(FD_SETSIZE)");
    ck_assert_msg(loop_add_reader(loop, FD_SETSIZE - 1, probe_cb, &p) == 0,
                  "add_reader(FD_SETSIZE - 1) is in range and must succeed: %s",
                  loop_error(loop));
    ck_assert_int_eq(loop_remove_reader(loop, FD_SETSIZE - 1), 1);
    free_loop(loop);
}
END_TEST

START_TEST(null_callback_refused)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct probe p = {.fd = sv[1], .drain = 1};
    expect_refused(loop, loop_add_reader(loop, sv[1], NULL, NULL), EINVAL, "NULL",
                   "add_reader(fd, NULL)");
    expect_refused(loop, loop_add_writer(loop, sv[1], NULL, NULL), EINVAL, "NULL",
                   "add_writer(fd, NULL)");
    /* A refused call changes nothing: the reader added before stays. */
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &p), 0);
    expect_refused(loop, loop_add_reader(loop, sv[1], NULL, NULL), EINVAL, "NULL",
                   "add_reader(fd, NULL) over a watched fd");
    send_byte(sv[0]);
    one_tick(loop);
    ck_assert_msg(p.calls == 1, "a refused add_reader(fd, NULL) must leave "
                  "the existing reader in place (it was called %d times)",
                  p.calls);
    ck_assert_int_eq(loop_remove_writer(loop, sv[1]), 0);
    close_pair(sv);
    free_loop(loop);
}
END_TEST

/* ---- run_forever and stop ----------------------------------------------- */

struct late_writer {
    int fd;
    int delay_ms;
};

static void *write_later(void *arg)
{
    struct late_writer *lw = arg;
    sleep_ms(lw->delay_ms);
    send_byte(lw->fd);
    return NULL;
}

/* stop() before run_forever(): exactly one tick, and it does not block. */
START_TEST(stop_before_run_is_one_nonblocking_tick)
{
    loop_t *loop = new_loop();
    int idle[2], busy[2];
    make_pair(idle);
    make_pair(busy);

    /* 1. Nothing is ready: the tick must only look, not wait.  If it
     * blocked, the byte written 300 ms later would end the wait and the idle
     * fd's callback would run: the test then fails instead of hanging. */
    struct probe pi = {.fd = idle[1], .drain = 1};
    ck_assert_int_eq(loop_add_reader(loop, idle[1], probe_cb, &pi), 0);
    struct late_writer lw = {idle[0], 300};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, write_later, &lw), 0);
    loop_stop(loop);
    double t0 = now();
    ck_assert_int_eq(loop_run_forever(loop), 0);
    double elapsed = now() - t0;
    pthread_join(t, NULL);
    ck_assert_msg(pi.calls == 0 && elapsed < 0.2,
                  "stop() before run_forever(): the tick blocked for %.0f ms; "
                  "with stopping set select() must only look (timeout 0)",
                  elapsed * 1000);

    /* 2. An fd that stays ready is called once per tick: once in all. */
    struct probe pb = {.fd = busy[1]}; /* never drains: ready every tick */
    ck_assert_int_eq(loop_add_reader(loop, busy[1], probe_cb, &pb), 0);
    send_byte(busy[0]);
    one_tick(loop);
    ck_assert_msg(pb.calls == 1, "stop() before run_forever(): the always-ready "
                  "reader ran %d times, expected exactly 1 (one tick)", pb.calls);
    close_pair(idle);
    close_pair(busy);
    free_loop(loop);
}
END_TEST

START_TEST(run_forever_twice)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct probe p = {.fd = sv[1], .stop_at = 1}; /* never drains */
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &p), 0);
    send_byte(sv[0]);
    ck_assert_msg(loop_run_forever(loop) == 0, "first run_forever(): %s",
                  loop_error(loop));
    ck_assert_int_eq(p.calls, 1);
    /* The second run must not inherit the first run's stop: the callback
     * stops it on its 4th call, so it must run 3 more ticks. */
    p.stop_at = 4;
    ck_assert_msg(loop_run_forever(loop) == 0, "second run_forever(): %s",
                  loop_error(loop));
    ck_assert_msg(p.calls == 4, "the second run_forever() ran %d tick(s), "
                  "expected 3: reset `stopping` when run_forever returns",
                  p.calls - 1);
    close_pair(sv);
    free_loop(loop);
}
END_TEST

struct nested {
    int run_rc, run_errno, close_rc, close_errno;
};

static void nested_cb(loop_t *loop, void *arg)
{
    struct nested *n = arg;
    n->run_rc = loop_run_forever(loop);
    n->run_errno = errno;
    n->close_rc = loop_close(loop);
    n->close_errno = errno;
    loop_stop(loop);
}

START_TEST(running_loop_refuses_run_and_close)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct nested n = {0};
    ck_assert_int_eq(loop_add_writer(loop, sv[0], nested_cb, &n), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(n.run_rc == -1 && n.run_errno == EBUSY,
                  "run_forever() inside a callback returned %d (errno %d), "
                  "expected -1 with EBUSY", n.run_rc, n.run_errno);
    ck_assert_msg(n.close_rc == -1 && n.close_errno == EBUSY,
                  "close() inside a callback returned %d (errno %d), "
                  "expected -1 with EBUSY", n.close_rc, n.close_errno);
    close_pair(sv);
    free_loop(loop);
}
END_TEST

START_TEST(closed_loop_refuses)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct probe p = {.fd = sv[1]};
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &p), 0);
    ck_assert_int_eq(loop_close(loop), 0);
    const char *calls[] = {"add_reader", "add_writer", "run_forever"};
    int rcs[3];
    rcs[0] = loop_add_reader(loop, sv[1], probe_cb, &p);
    rcs[1] = loop_add_writer(loop, sv[0], probe_cb, &p);
    rcs[2] = loop_run_forever(loop);
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(rcs[i] == -1, "%s on a closed loop returned %d, "
                      "expected -1", calls[i], rcs[i]);
    }
    ck_assert_msg(strstr(loop_error(loop), "closed") != NULL,
                  "the message for a closed loop should say so, got \"%s\"",
                  loop_error(loop));
    /* remove_reader/writer too: -1 with EINVAL, even for an fd that was
     * watched (close forgot it). */
    errno = 0;
    expect_refused(loop, loop_remove_reader(loop, sv[1]), EINVAL, "closed",
                   "remove_reader on a closed loop");
    errno = 0;
    expect_refused(loop, loop_remove_writer(loop, sv[0]), EINVAL, "closed",
                   "remove_writer on a closed loop");
    ck_assert_msg(loop_close(loop) == 0, "closing twice must be harmless");
    ck_assert_int_eq(p.calls, 0);
    loop_free(loop);
    close_pair(sv);
}
END_TEST

/* loop_free() from a callback of the running loop would free the loop that
 * run_once is still using (ASan: heap-use-after-free).  It is refused as
 * loop_close() is: it frees nothing, errno EBUSY, a message. */
struct freer {
    int calls, err;
    char msg[200];
};

static void free_cb(loop_t *loop, void *arg)
{
    struct freer *f = arg;
    f->calls++;
    errno = 0;
    loop_free(loop);
    f->err = errno;
    snprintf(f->msg, sizeof f->msg, "%s", loop_error(loop));
    loop_stop(loop);
}

START_TEST(free_inside_callback_refused)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct freer f = {0};
    ck_assert_int_eq(loop_add_writer(loop, sv[0], free_cb, &f), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(f.calls, 1);
    ck_assert_msg(f.err == EBUSY, "loop_free() inside a callback set errno %d (%s), "
                  "expected EBUSY: it must refuse, as loop_close() does", f.err,
                  strerror(f.err));
    ck_assert_msg(strstr(f.msg, "running") != NULL, "loop_free() inside a callback: "
                  "loop_error() says \"%s\"", f.msg);
    /* The loop is still there, and still works. */
    ck_assert_int_eq(loop_remove_writer(loop, sv[0]), 1);
    one_tick(loop);
    close_pair(sv);
    free_loop(loop);
}
END_TEST

/* ---- the loop's own fds -------------------------------------------------- */

/* Which of the fds below 256 are open: own[fd] = 1. */
static void open_fds(char open[256])
{
    for (int fd = 0; fd < 256; fd++)
        open[fd] = fcntl(fd, F_GETFD) != -1;
}

/* From chapter 06 on the loop opens fds of its own: its self-pipe (and at
 * 07, epoll's or kqueue's fd).  They are the loop's business: add_reader
 * and add_writer refuse them (EINVAL, a message that says so).  Before
 * chapter 06 there are none, and this test checks nothing. */
START_TEST(own_fds_refused)
{
    char before[256], after[256];
    open_fds(before);
    loop_t *loop = new_loop();
    open_fds(after);
    struct probe p = {0};
    int own = 0;
    for (int fd = 0; fd < 256; fd++) {
        if (before[fd] || !after[fd])
            continue;
        own++;
        errno = 0;
        expect_refused(loop, loop_add_reader(loop, fd, probe_cb, &p), EINVAL, "own",
                       "add_reader(the loop's own fd)");
        errno = 0;
        expect_refused(loop, loop_add_writer(loop, fd, probe_cb, &p), EINVAL, "own",
                       "add_writer(the loop's own fd)");
    }
    ck_assert_int_le(own, 3);
    one_tick(loop); /* the refusals changed nothing */
    ck_assert_int_eq(p.calls, 0);
    free_loop(loop);
}
END_TEST

/* Every fd below FD_SETSIZE is taken when loop_new() runs, so the loop's
 * own fds (chapter 06's self-pipe) land at FD_SETSIZE or above.  On select,
 * which cannot watch them, loop_new() must fail with EINVAL and leave no fd
 * open; a loop that opens no fd (chapters 01-05) or waits in another
 * backend (07's poll, epoll) may succeed. */
START_TEST(own_fds_beyond_fd_setsize)
{
    struct rlimit lim;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &lim), 0);
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < FD_SETSIZE + 16) {
        if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < FD_SETSIZE + 16)
            return; /* this process may not open that many fds: nothing to test */
        lim.rlim_cur = FD_SETSIZE + 16;
        ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &lim), 0);
    }
    static int filler[FD_SETSIZE];
    int nfill = 0;
    for (;;) { /* take every free fd below FD_SETSIZE */
        int fd = open("/dev/null", O_RDONLY);
        ck_assert_msg(fd >= 0, "open(/dev/null): %s", strerror(errno));
        if (fd >= FD_SETSIZE) {
            close(fd);
            break;
        }
        filler[nfill++] = fd;
    }
    errno = 0;
    loop_t *loop = loop_new();
    int err = errno;
    int opened = 0; /* the loop's own fds, all >= FD_SETSIZE */
    for (int fd = FD_SETSIZE; fd < FD_SETSIZE + 8; fd++)
        opened += fcntl(fd, F_GETFD) != -1;
    const char *backend = "select"; /* chapters 01-06 have no other */
#ifdef LOOP_HAS_BACKENDS
    if (loop != NULL)
        backend = loop_backend(loop);
    else if (getenv("LOOP_BACKEND") != NULL && getenv("LOOP_BACKEND")[0] != '\0')
        backend = getenv("LOOP_BACKEND");
    else
        backend = "?";
#endif
    if (loop != NULL) {
        int bad = strcmp(backend, "select") == 0 && opened > 0;
        free_loop(loop);
        for (int i = 0; i < nfill; i++)
            close(filler[i]);
        ck_assert_msg(!bad, "loop_new() succeeded on select with %d fd(s) of its own at "
                      "FD_SETSIZE (%d) or above, which select() cannot watch: it must "
                      "fail with EINVAL", opened, FD_SETSIZE);
        return;
    }
    for (int i = 0; i < nfill; i++)
        close(filler[i]);
    ck_assert_msg(err == EINVAL, "loop_new() with no fd free below FD_SETSIZE failed "
                  "with errno %d (%s), expected EINVAL (select cannot watch its "
                  "self-pipe)", err, strerror(err));
    ck_assert_msg(opened == 0, "the failed loop_new() left %d fd(s) open", opened);
}
END_TEST

/* ---- EINTR -------------------------------------------------------------- */

/* Atomic, not volatile sig_atomic_t: the interrupting thread reads it too. */
static atomic_int signals_caught;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&signals_caught, 1);
}

struct interrupter {
    pthread_t target;
    int fd;
};

/* Interrupt the loop's wait three times, then give it something to read.
 * Two SIGUSR1 pending at once are one signal, so a loaded machine that does
 * not run the loop's thread between two kills catches fewer than three: the
 * test asks for at least one. */
static void *interrupt_then_write(void *arg)
{
    struct interrupter *in = arg;
    for (int i = 0; i < 3; i++) {
        sleep_ms(10);
        pthread_kill(in->target, SIGUSR1);
    }
    sleep_ms(10);
    send_byte(in->fd);
    return NULL;
}

START_TEST(eintr_survived)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1; /* no SA_RESTART: select() returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
    atomic_store(&signals_caught, 0);

    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    struct probe p = {.fd = sv[1], .drain = 1, .stop_at = 1};
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &p), 0);
    struct interrupter in = {pthread_self(), sv[0]};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, interrupt_then_write, &in), 0);
    int rc = loop_run_forever(loop);
    pthread_join(t, NULL);
    sigaction(SIGUSR1, &old, NULL);
    ck_assert_msg(rc == 0, "a signal during select() made run_forever() fail "
                  "(%s): EINTR must be treated as a spurious wake-up",
                  loop_error(loop));
    ck_assert_msg(atomic_load(&signals_caught) >= 1, "no signal was caught: the test "
                  "proved nothing about EINTR");
    ck_assert_msg(p.calls == 1, "after the signals the reader must still be "
                  "called once (it was called %d times)", p.calls);
    close_pair(sv);
    free_loop(loop);
}
END_TEST

/* ---- high fds ----------------------------------------------------------- */

/* The highest watched fd matters to select() (nfds).  Watching a high fd,
 * removing it, then using a low one must still work. */
START_TEST(high_fd_then_low_fd)
{
    loop_t *loop = new_loop();
    int sv[2];
    make_pair(sv);
    int high = fcntl(sv[1], F_DUPFD, FD_SETSIZE - 100);
    if (high < 0 || high >= FD_SETSIZE) {
        if (high >= 0)
            close(high);
        close_pair(sv);
        free_loop(loop);
        return; /* RLIMIT_NOFILE too low for this check: nothing to test */
    }
    struct probe ph = {.fd = high, .drain = 1}, pl = {.fd = sv[1], .drain = 1};
    ck_assert_int_eq(loop_add_reader(loop, high, probe_cb, &ph), 0);
    send_byte(sv[0]);
    one_tick(loop);
    ck_assert_msg(ph.calls == 1, "the reader of fd %d was called %d times, "
                  "expected 1", high, ph.calls);
    ck_assert_int_eq(loop_remove_reader(loop, high), 1);
    close(high);
    ck_assert_int_eq(loop_add_reader(loop, sv[1], probe_cb, &pl), 0);
    send_byte(sv[0]);
    one_tick(loop);
    ck_assert_msg(pl.calls == 1, "after removing (and closing) high fd %d the "
                  "reader of fd %d was called %d times, expected 1 (is the "
                  "closed fd still passed to select()?): %s",
                  high, sv[1], pl.calls, loop_error(loop));
    close_pair(sv);
    free_loop(loop);
}
END_TEST

static Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *reg = tcase_create("registration");
    tcase_add_test(reg, reader_called_when_readable);
    tcase_add_test(reg, only_ready_fds_called);
    tcase_add_test(reg, add_reader_replaces);
    tcase_add_test(reg, remove_reader);
    tcase_add_test(reg, writer_add_replace_remove);
    tcase_add_test(reg, reader_and_writer_on_one_fd);
    tcase_add_test(reg, high_fd_then_low_fd);
    suite_add_tcase(s, reg);

    TCase *inside = tcase_create("inside_callbacks");
    tcase_add_test(inside, remove_other_in_same_tick);
    tcase_add_test(inside, remove_self_inside_callback);
    tcase_add_test(inside, add_inside_callback);
    suite_add_tcase(s, inside);

    TCase *refused = tcase_create("refused");
    tcase_add_test(refused, negative_fd_refused);
    tcase_add_test(refused, fd_setsize_refused);
    tcase_add_test(refused, null_callback_refused);
    tcase_add_test(refused, own_fds_refused);
    tcase_add_test(refused, own_fds_beyond_fd_setsize);
    suite_add_tcase(s, refused);

    TCase *run = tcase_create("run_stop_close");
    tcase_add_test(run, stop_before_run_is_one_nonblocking_tick);
    tcase_add_test(run, run_forever_twice);
    tcase_add_test(run, running_loop_refuses_run_and_close);
    tcase_add_test(run, closed_loop_refuses);
    tcase_add_test(run, free_inside_callback_refused);
    tcase_add_test(run, eintr_survived);
    suite_add_tcase(s, run);
    return s;
}

int main(void)
{
    return run_suite(io_suite());
}
