/* sender.c -- exercise 3 (starter): send a large buffer, never blocking.
 *
 * EXERCISE.  As given, sender_start makes one write() and declares the job
 * done, like demo_echo's client.  That is enough for a short message on an
 * empty socket; with a megabyte on a non-blocking socket most of the bytes
 * are simply lost.  Finish the job with loop_add_writer; see sender.h.  Test
 * it with `make exercise CH=01`.
 */
#define _POSIX_C_SOURCE 200809L
#include "sender.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* TODO(3-write-buffer): write a writer callback that writes the rest
 * (s->data + s->sent), counts its calls in s->writer_calls, and stops
 * watching the fd once all is sent (done) or write() fails with an error
 * other than EAGAIN / EINTR (s->error = errno). */

int sender_start(loop_t *loop, struct sender *s, int fd, const char *data,
                 size_t len)
{
    (void)loop;
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->data = data;
    s->len = len;
    ssize_t n = write(fd, data, len);
    if (n > 0)
        s->sent = (size_t)n;
    /* TODO(3-write-buffer): if bytes remain, watch fd for writing instead
     * of pretending that all went out. */
    s->done = 1;
    return 0;
}
