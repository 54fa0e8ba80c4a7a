/* line_echo.c -- exercise 2 (starter): echo complete lines only.
 *
 * EXERCISE.  As given, on_readable is demo_echo's server: it writes back
 * whatever one read() returned, so a line that arrives in two pieces is
 * echoed in two pieces, before its end has come.  Make it echo only whole
 * lines; see line_echo.h for the rules.  Test: `make exercise CH=01`.
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

static void on_readable(loop_t *loop, void *arg)
{
    struct line_echo *e = arg;
    char chunk[64];
    ssize_t n = read(e->fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return; /* nothing after all: wait for the next tick */
    if (n <= 0) {
        hang_up(loop, e); /* end of file, or an error */
        return;
    }
    /* TODO(2-line-echo): append the chunk to e->buf, and write back each
     * complete line ('\n' included) as soon as its '\n' has arrived; keep the
     * unfinished rest for the next call.  Count lines in e->lines.  Hang up
     * on a peer whose line does not fit in LINE_ECHO_MAX bytes. */
    (void)!write(e->fd, chunk, (size_t)n);
}

int line_echo_start(loop_t *loop, struct line_echo *e, int fd)
{
    memset(e, 0, sizeof *e);
    e->fd = fd;
    return loop_add_reader(loop, fd, on_readable, e);
}
