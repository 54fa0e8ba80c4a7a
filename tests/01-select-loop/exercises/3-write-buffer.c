/* Exercise 01.3 (3-write-buffer): send a megabyte through a non-blocking
 * socket with loop_add_writer.
 *
 * The sender's end of a socketpair is non-blocking and has a small send
 * buffer; a reader callback on the other end drains it.  The test runs
 * non-blocking ticks (loop_stop, then loop_run_forever) until every byte has
 * arrived or nothing moves any more.  SIGPIPE is ignored, as CPython does at
 * start-up, so that writing to a closed peer is the error EPIPE.
 */
#define _POSIX_C_SOURCE 200809L
#include "sender.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"

#define BIG (1024 * 1024)

static loop_t *loop;
static int out_fd, in_fd; /* the sender's end, the receiver's end */
static char *payload, *received;
static size_t received_len;

static void drain(loop_t *l, void *arg)
{
    (void)l;
    (void)arg;
    ssize_t n = read(in_fd, received + received_len,
                     received_len + 65536 <= BIG ? 65536 : BIG - received_len);
    if (n > 0)
        received_len += (size_t)n;
}

static void setup(void)
{
    int sv[2];
    ck_assert_msg(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair: %s",
                  strerror(errno));
    out_fd = sv[0];
    in_fd = sv[1];
    int small = 32 * 1024; /* the kernel doubles it; still far below BIG */
    setsockopt(out_fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    setsockopt(in_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    fcntl(out_fd, F_SETFL, fcntl(out_fd, F_GETFL) | O_NONBLOCK);
    payload = malloc(BIG);
    received = malloc(BIG + 1);
    ck_assert(payload != NULL && received != NULL);
    for (size_t i = 0; i < BIG; i++)
        payload[i] = (char)('a' + (i * 7 + i / 4096) % 26);
    received_len = 0;
    loop = loop_new();
    ck_assert_ptr_nonnull(loop);
}

static void teardown(void)
{
    loop_close(loop);
    loop_free(loop);
    close(out_fd);
    if (in_fd >= 0)
        close(in_fd);
    free(payload);
    free(received);
}

static void tick(void)
{
    loop_stop(loop);
    ck_assert_msg(loop_run_forever(loop) == 0, "loop_run_forever: %s",
                  loop_error(loop));
}

START_TEST(short_message_needs_no_writer)
{
    struct sender s;
    ck_assert_int_eq(sender_start(loop, &s, out_fd, payload, 100), 0);
    ck_assert_msg(s.done && s.sent == 100 && s.error == 0,
                  "100 bytes fit in an empty socket at once: expected done=1, "
                  "sent=100, error=0; got done=%d, sent=%zu, error=%d",
                  s.done, s.sent, s.error);
    ck_assert_msg(loop_remove_writer(loop, out_fd) == 0,
                  "everything was written at once, so no writer should be "
                  "registered (asyncio calls add_writer only if bytes remain)");
    ck_assert_int_eq(s.writer_calls, 0);
}
END_TEST

START_TEST(megabyte_arrives_whole)
{
    struct sender s;
    ck_assert_int_eq(loop_add_reader(loop, in_fd, drain, NULL), 0);
    ck_assert_msg(sender_start(loop, &s, out_fd, payload, BIG) == 0,
                  "sender_start failed: %s", loop_error(loop));
    ck_assert_msg(s.sent < BIG, "sender_start wrote all %d bytes at once: the "
                  "socket buffer is larger than this test assumes", BIG);
    int idle = 0;
    for (int t = 0; t < 100000 && received_len < BIG && idle < 1000; t++) {
        size_t before = received_len;
        tick();
        idle = received_len == before ? idle + 1 : 0;
    }
    ck_assert_msg(received_len == BIG,
                  "only %zu of %d bytes arrived (sender: sent=%zu, done=%d, "
                  "writer_calls=%d). When write() takes less than asked or "
                  "fails with EAGAIN, keep the rest and watch the fd with "
                  "loop_add_writer", received_len, BIG, s.sent, s.done,
                  s.writer_calls);
    ck_assert_msg(memcmp(received, payload, BIG) == 0,
                  "all bytes arrived but not in order: resume at data + sent");
    ck_assert_msg(s.done && s.sent == BIG && s.error == 0,
                  "after the last byte: expected done=1, sent=%d, error=0; got "
                  "done=%d, sent=%zu, error=%d", BIG, s.done, s.sent, s.error);
    ck_assert_msg(s.writer_calls > 0, "the writer callback never ran");
    ck_assert_msg(loop_remove_writer(loop, out_fd) == 0,
                  "the sender is done but still watches its fd for writing: "
                  "remove the writer, or the loop calls it every tick (a busy "
                  "loop: a socket with room is always writable)");
}
END_TEST

START_TEST(peer_gone_is_an_error)
{
    struct sender s;
    ck_assert_msg(sender_start(loop, &s, out_fd, payload, BIG) == 0,
                  "sender_start failed: %s", loop_error(loop));
    close(in_fd); /* the receiver goes away without reading */
    in_fd = -1;
    for (int t = 0; t < 100 && !s.done && s.error == 0; t++)
        tick();
    ck_assert_msg(s.error != 0 && !s.done,
                  "the peer closed its end: the next write fails (EPIPE); "
                  "expected error set and done=0, got error=%d (%s), done=%d",
                  s.error, strerror(s.error), s.done);
    ck_assert_msg(loop_remove_writer(loop, out_fd) == 0,
                  "after a write error the sender must stop watching its fd");
}
END_TEST

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    Suite *su = suite_create("exercise 01.3: write buffer");
    TCase *tc = tcase_create("sender");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, short_message_needs_no_writer);
    tcase_add_test(tc, megabyte_arrives_whole);
    tcase_add_test(tc, peer_gone_is_an_error);
    suite_add_tcase(su, tc);
    return run_suite(su);
}
