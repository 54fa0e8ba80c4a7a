/* sender.c -- exercise 3 (answer): send a large buffer, never blocking.
 *
 * The shape of asyncio's _SelectorSocketTransport: write() tries at once and
 * calls add_writer only if bytes remain; _write_ready() writes more each
 * time the fd is writable and calls remove_writer when the buffer is empty.
 */
#define _POSIX_C_SOURCE 200809L
#include "sender.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* @region write_some */
/* Write as much of the rest as the socket takes now.  Returns 1 when
 * nothing is left to do (all sent, or an error recorded), 0 when bytes
 * remain for a later tick. */
static int write_some(struct sender *s)
{
    while (s->sent < s->len) {
        ssize_t n = write(s->fd, s->data + s->sent, s->len - s->sent);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0; /* the send buffer is full: wait to be writable */
            s->error = errno;
            return 1;
        }
        s->sent += (size_t)n;
    }
    s->done = 1;
    return 1;
}
/* @end write_some */

/* @region on_writable */
static void on_writable(loop_t *loop, void *arg)
{
    struct sender *s = arg;
    s->writer_calls++;
    if (write_some(s))
        loop_remove_writer(loop, s->fd);
}

int sender_start(loop_t *loop, struct sender *s, int fd, const char *data,
                 size_t len)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->data = data;
    s->len = len;
    if (write_some(s))
        return 0; /* all written at once (or failed): nothing to watch */
    return loop_add_writer(loop, fd, on_writable, s);
}
/* @end on_writable */
