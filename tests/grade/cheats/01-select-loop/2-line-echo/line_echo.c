/* line_echo.c -- a CHEAT for exercise 01.2 (tests/grade/README.md): no buffer.
 *
 * It never keeps a fragment: it peeks at the socket (MSG_PEEK), and reads
 * only up to the last '\n' it sees, leaving an unfinished line in the
 * kernel's buffer for the next tick.  e->buf is never used.
 */
#define _POSIX_C_SOURCE 200809L
#include "line_echo.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void hang_up(loop_t *loop, struct line_echo *e)
{
    loop_remove_reader(loop, e->fd);
    e->closed = 1;
}

static void on_readable(loop_t *loop, void *arg)
{
    struct line_echo *e = arg;
    char chunk[LINE_ECHO_MAX];
    ssize_t n = recv(e->fd, chunk, sizeof chunk, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        hang_up(loop, e);
        return;
    }
    ssize_t end = n;
    while (end > 0 && chunk[end - 1] != '\n')
        end--;
    if (end == 0) {
        if (n == LINE_ECHO_MAX)
            hang_up(loop, e); /* a line too long */
        return;               /* not a whole line yet: leave it in the socket */
    }
    (void)!read(e->fd, chunk, (size_t)end);
    (void)!write(e->fd, chunk, (size_t)end);
    for (ssize_t i = 0; i < end; i++)
        e->lines += chunk[i] == '\n';
}

int line_echo_start(loop_t *loop, struct line_echo *e, int fd)
{
    memset(e, 0, sizeof *e);
    e->fd = fd;
    return loop_add_reader(loop, fd, on_readable, e);
}
