/* line_echo.c -- exercise 2 (answer): echo complete lines only.
 *
 * The bytes of an unfinished line wait in e->buf between ticks.  Each tick
 * reads one chunk (one read() per readable event, like asyncio's transports:
 * select() will report the fd again if more is waiting), then echoes every
 * line the chunk completes.
 */
#define _POSIX_C_SOURCE 200809L
#include "line_echo.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static void hang_up(loop_t *loop, struct line_echo *e)
{
    loop_remove_reader(loop, e->fd);
    e->closed = 1;
}

/* @region on_readable */
static void on_readable(loop_t *loop, void *arg)
{
    struct line_echo *e = arg;
    char chunk[64];
    ssize_t n = read(e->fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return; /* nothing after all: wait for the next tick */
    if (n <= 0) {
        hang_up(loop, e); /* end of file (an unfinished line is dropped) */
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (e->len == sizeof e->buf) { /* full, and still no '\n' */
            hang_up(loop, e);
            return;
        }
        e->buf[e->len++] = chunk[i];
        if (chunk[i] == '\n') {
            /* A socketpair's buffer takes a short line whole; a real server
             * would keep what write() did not take (exercise 3). */
            (void)!write(e->fd, e->buf, e->len);
            e->lines++;
            e->len = 0;
        }
    }
}
/* @end on_readable */

int line_echo_start(loop_t *loop, struct line_echo *e, int fd)
{
    memset(e, 0, sizeof *e);
    e->fd = fd;
    return loop_add_reader(loop, fd, on_readable, e);
}
