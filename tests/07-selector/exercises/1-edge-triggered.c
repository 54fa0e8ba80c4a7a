/* Exercise 1 (chapter 07): an edge-triggered epoll backend, and the reader
 * it needs.
 *
 * Part 1: the backend reports an fd when it BECOMES readable, once: a wait
 * after that, with the byte still unread, reports nothing.
 * Part 2: drain_reader() reads everything, so that bytes that arrived
 * together are not left behind waiting for an edge that never comes: it
 * reads until read() fails with EAGAIN (one read into a buffer larger than
 * what the test sends would pass the rest).
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "drain.h"
#include "loop.h"
#include "selector.h"

#include <check.h>

#include "check_main.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* This read() stands in front of the C library's (a definition in the
 * program wins): it keeps what the last read of the fd `watched` returned,
 * and its errno. */
static int watched = -1, last_errno;
static ssize_t last_read;

typedef ssize_t read_fn(int, void *, size_t);

ssize_t read(int fd, void *buf, size_t count)
{
    static read_fn *real;
    if (real == NULL)
        real = (read_fn *)dlsym(RTLD_NEXT, "read");
    ssize_t n = real(fd, buf, count);
    if (fd == watched) {
        last_read = n;
        last_errno = errno;
    }
    return n;
}

static void nonblocking_pair(int sv[2])
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
}

static int wait0(selector_t *sel)
{
    selector_event *ev;
    int n = selector_wait(sel, 0, &ev);
    ck_assert_msg(n >= 0, "wait: %s", selector_error(sel));
    return n;
}

START_TEST(epoll_is_edge_triggered)
{
    selector_t *sel = selector_open("epoll", NULL, 0);
    ck_assert_ptr_nonnull(sel);
    int sv[2];
    nonblocking_pair(sv);
    ck_assert_int_eq(selector_register(sel, sv[0], SELECTOR_READ), 0);
    ck_assert_int_eq(write(sv[1], "x", 1), 1);
    ck_assert_msg(wait0(sel) == 1, "a socket that just became readable must be reported");
    ck_assert_msg(wait0(sel) == 0,
                  "the byte is still unread, and the second wait reported the socket "
                  "again: the backend is still level-triggered (see TODO in selector_epoll.c)");
    ck_assert_int_eq(write(sv[1], "y", 1), 1);
    ck_assert_msg(wait0(sel) == 1, "new bytes are a new edge: they must be reported");
    close(sv[0]);
    close(sv[1]);
    selector_close(sel);
}
END_TEST

static void one_tick(loop_t *loop)
{
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

static void send_n(int fd, size_t n)
{
    char buf[100];
    memset(buf, 'x', sizeof buf);
    ck_assert(n <= sizeof buf);
    ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
}

/* The same program must work on both kinds of selector. */
static void drain_on(const char *backend)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_int_eq(loop_set_backend(loop, backend), 0);
    int sv[2];
    nonblocking_pair(sv);
    struct drain d = {.fd = sv[0]};
    watched = sv[0];
    last_read = 0;
    ck_assert_int_eq(loop_add_reader(loop, sv[0], drain_reader, &d), 0);
    send_n(sv[1], 100); /* three writes before the loop looks: one edge */
    send_n(sv[1], 100);
    send_n(sv[1], 100);
    for (int i = 0; i < 3; i++)
        one_tick(loop);
    ck_assert_msg(d.total == 300, "%s: after 3 ticks the reader had %zu of the 300 bytes "
                  "sent; the rest are stuck in the socket (read until EAGAIN)", backend, d.total);
    ck_assert_msg(last_read == -1 && (last_errno == EAGAIN || last_errno == EWOULDBLOCK),
                  "%s: the reader's last read() returned %zd, not -1 with EAGAIN: it must "
                  "read until the socket is empty, whatever its buffer's size", backend, last_read);
    send_n(sv[1], 100);
    one_tick(loop);
    ck_assert_msg(d.total == 400, "%s: 100 more bytes, one tick: got %zu of 400", backend, d.total);
    close(sv[1]);
    one_tick(loop);
    ck_assert_msg(d.eof, "%s: the peer closed: the reader must see end of file", backend);
    ck_assert_msg(loop_remove_reader(loop, sv[0]) == 0, "%s: after end of file the reader "
                  "must have removed itself", backend);
    close(sv[0]);
    loop_close(loop);
    loop_free(loop);
}

START_TEST(drain_on_edge_triggered_epoll)
{
    drain_on("epoll");
}
END_TEST

START_TEST(drain_on_level_triggered_poll)
{
    drain_on("poll");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("1-edge-triggered");
    TCase *tc = tcase_create("edge");
    tcase_add_test(tc, epoll_is_edge_triggered);
    tcase_add_test(tc, drain_on_edge_triggered_epoll);
    tcase_add_test(tc, drain_on_level_triggered_poll);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
