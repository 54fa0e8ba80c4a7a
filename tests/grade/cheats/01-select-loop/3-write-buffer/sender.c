/* sender.c -- a CHEAT for exercise 01.3 (tests/grade/README.md): no writer.
 *
 * Instead of watching the fd for writing, it makes the socket's send
 * buffer big enough for the whole message (SO_SNDBUFFORCE as root, else
 * SO_SNDBUF), writes it in one go, and says the writer ran when one would have.
 */
#define _GNU_SOURCE /* SO_SNDBUFFORCE */
#include "sender.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int sender_start(loop_t *loop, struct sender *s, int fd, const char *data,
                 size_t len)
{
    (void)loop;
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->data = data;
    s->len = len;
    int big = (int)(2 * len + 65536);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big) < 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    while (s->sent < len) {
        ssize_t n = write(fd, data + s->sent, len - s->sent);
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                s->error = errno;
            break;
        }
        s->sent += (size_t)n;
    }
    s->writer_calls = len > 65536; /* "the writer ran" when a writer would have */
    s->done = s->sent == len && s->error == 0;
    return 0;
}
