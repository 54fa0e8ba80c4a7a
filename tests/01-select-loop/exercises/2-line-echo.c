/* Exercise 01.2 (2-line-echo): echo whole lines across partial reads.
 *
 * The client end of a socketpair writes lines in fragments; after each
 * fragment the test runs one non-blocking tick (loop_stop, then
 * loop_run_forever) and reads, without blocking, what the server echoed.
 */
#define _POSIX_C_SOURCE 200809L
#include "line_echo.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"

static loop_t *loop;
static int client, server;
static struct line_echo echo;

static void setup(void)
{
    int sv[2];
    ck_assert_msg(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair: %s",
                  strerror(errno));
    client = sv[0];
    server = sv[1];
    loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_msg(line_echo_start(loop, &echo, server) == 0,
                  "line_echo_start failed: %s", loop_error(loop));
}

static void teardown(void)
{
    loop_close(loop);
    loop_free(loop);
    close(client);
    close(server);
}

static void send_text(const char *text)
{
    size_t len = strlen(text);
    ck_assert_msg(write(client, text, len) == (ssize_t)len, "client write: %s",
                  strerror(errno));
}

static void ticks(int n)
{
    for (int i = 0; i < n; i++) {
        loop_stop(loop);
        ck_assert_msg(loop_run_forever(loop) == 0, "loop_run_forever: %s",
                      loop_error(loop));
    }
}

/* Everything the server has echoed so far, without blocking. */
static const char *echoed(void)
{
    static char buf[8192];
    size_t len = 0;
    for (;;) {
        ssize_t n = recv(client, buf + len, sizeof buf - 1 - len, MSG_DONTWAIT);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}

/* TEXT with newlines shown as \n and cut after 60 characters, for messages.
 * SLOT picks one of two static buffers, so two may appear in one message. */
static const char *shown(const char *text, int slot)
{
    static char bufs[2][80];
    char *out = bufs[slot];
    size_t o = 0;
    for (const char *p = text; *p && o < 64; p++) {
        if (*p == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *p;
        }
    }
    if (strlen(text) > 60)
        o = (size_t)(snprintf(out + 60, 20, "...") + 60);
    out[o] = '\0';
    return out;
}

#define EXPECT_ECHO(want, when)                                              \
    do {                                                                     \
        const char *got_ = echoed();                                         \
        ck_assert_msg(strcmp(got_, want) == 0,                               \
                      "%s: the server echoed \"%s\", expected \"%s\"", when, \
                      shown(got_, 0), shown(want, 1));                       \
    } while (0)

/* The server took everything the client sent out of its socket: a fragment
 * left there keeps the fd readable, and a level-triggered loop then calls
 * the reader at every tick, for nothing (a cheat peeks with MSG_PEEK and
 * reads only whole lines: tests/grade/README.md). */
static void expect_socket_drained(const char *when)
{
    char byte;
    ssize_t n = recv(server, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    ck_assert_msg(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
                  "%s: bytes wait unread in the server's socket, so its fd stays "
                  "readable and the loop calls the reader at every tick: read "
                  "the fragment and keep it in e->buf", when);
}

START_TEST(fragment_is_not_echoed_early)
{
    send_text("hel");
    ticks(1);
    EXPECT_ECHO("", "after \"hel\" (no newline yet)");
    expect_socket_drained("after \"hel\"");
    ck_assert_msg(echo.len == 3 && memcmp(echo.buf, "hel", 3) == 0,
                  "after \"hel\": e->len is %zu, expected 3 (the fragment, kept in "
                  "e->buf)", echo.len);
    send_text("lo\nwor");
    ticks(1);
    EXPECT_ECHO("hello\n", "after \"lo\\nwor\" (one line complete)");
    expect_socket_drained("after \"lo\\nwor\"");
    send_text("ld\n");
    ticks(1);
    EXPECT_ECHO("world\n", "after \"ld\\n\" (the second line complete)");
    ck_assert_msg(echo.lines == 2, "e->lines is %d, expected 2", echo.lines);
    ck_assert_msg(!echo.closed, "the server hung up on a well-behaved client");
}
END_TEST

START_TEST(several_lines_in_one_read)
{
    send_text("a\nbb\nccc\nd");
    ticks(1);
    EXPECT_ECHO("a\nbb\nccc\n", "three lines and a fragment in one write");
    ck_assert_msg(echo.lines == 3, "e->lines is %d, expected 3", echo.lines);
    send_text("\n");
    ticks(1);
    EXPECT_ECHO("d\n", "the fragment's newline");
}
END_TEST

START_TEST(byte_by_byte)
{
    const char *text = "one\ntwo\n";
    char expect[32] = "";
    for (const char *p = text; *p; p++) {
        char one[2] = {*p, '\0'};
        send_text(one);
        ticks(1);
        if (*p == '\n')
            strcpy(expect, p == text + 3 ? "one\n" : "two\n");
        else
            expect[0] = '\0';
        char when[64];
        snprintf(when, sizeof when, "after byte %d of \"one\\ntwo\\n\"",
                 (int)(p - text) + 1);
        EXPECT_ECHO(expect, when);
    }
}
END_TEST

/* 100 lines written at once: more than one read() takes, so the server needs
 * several ticks, and lines are split between reads. */
START_TEST(many_lines_many_ticks)
{
    static char all[2000];
    size_t len = 0;
    for (int i = 0; i < 100; i++)
        len += (size_t)snprintf(all + len, sizeof all - len, "line %03d\n", i);
    send_text(all);
    static char got[2000];
    size_t got_len = 0;
    for (int t = 0; t < 200 && echo.lines < 100; t++) {
        ticks(1);
        const char *e = echoed();
        size_t n = strlen(e);
        ck_assert_msg(got_len + n < sizeof got, "echoed more than was sent");
        memcpy(got + got_len, e, n);
        got_len += n;
        ck_assert_msg(got_len == 0 || got[got_len - 1] == '\n',
                      "after a tick the echo ends in the middle of a line: "
                      "\"...%s\"", shown(got_len > 8 ? got + got_len - 8 : got, 0));
    }
    got[got_len] = '\0';
    ck_assert_msg(echo.lines == 100, "%d of 100 lines echoed", echo.lines);
    ck_assert_msg(strcmp(got, all) == 0, "the echo differs from what was sent");
}
END_TEST

START_TEST(hang_up_on_eof)
{
    send_text("bye\nunfinished");
    shutdown(client, SHUT_WR); /* end of file for the server */
    ticks(3);
    EXPECT_ECHO("bye\n", "a line then end-of-file");
    ck_assert_msg(echo.closed, "the peer hung up but e->closed is 0");
    ck_assert_msg(loop_remove_reader(loop, server) == 0,
                  "after end-of-file the server must stop watching its fd "
                  "(loop_remove_reader found a reader still there)");
}
END_TEST

START_TEST(hang_up_on_overlong_line)
{
    char big[LINE_ECHO_MAX + 72];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    send_text(big);
    ticks(5);
    EXPECT_ECHO("", "a line longer than LINE_ECHO_MAX");
    ck_assert_msg(echo.closed, "%zu bytes without a newline (LINE_ECHO_MAX is "
                  "%d): the server must hang up, e->closed is 0",
                  sizeof big - 1, LINE_ECHO_MAX);
    ck_assert_msg(loop_remove_reader(loop, server) == 0,
                  "after hanging up the server must stop watching its fd");
}
END_TEST

START_TEST(longest_line_fits)
{
    char line[LINE_ECHO_MAX + 1];
    memset(line, 'b', LINE_ECHO_MAX - 1);
    line[LINE_ECHO_MAX - 1] = '\n';
    line[LINE_ECHO_MAX] = '\0';
    send_text(line);
    ticks(5);
    EXPECT_ECHO(line, "a line of exactly LINE_ECHO_MAX bytes, '\\n' included");
    ck_assert_msg(!echo.closed, "a line of exactly LINE_ECHO_MAX bytes fits");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 01.2: line echo");
    TCase *tc = tcase_create("line_echo");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fragment_is_not_echoed_early);
    tcase_add_test(tc, several_lines_in_one_read);
    tcase_add_test(tc, byte_by_byte);
    tcase_add_test(tc, many_lines_many_ticks);
    tcase_add_test(tc, hang_up_on_eof);
    tcase_add_test(tc, hang_up_on_overlong_line);
    tcase_add_test(tc, longest_line_fits);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
