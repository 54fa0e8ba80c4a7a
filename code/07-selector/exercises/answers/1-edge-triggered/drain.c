/* drain.c -- chapter 07, exercise 1 (answer): a reader that an
 * edge-triggered selector does not stall.
 *
 * Read until read() says there is nothing left (EAGAIN), end of file, or
 * an error.  The small buffer is on purpose: it makes the loop go round
 * several times for 300 bytes, as a real server's 64 KiB buffer does for a
 * few megabytes.
 */
#include "drain.h"

#include <errno.h>
#include <unistd.h>

void drain_reader(loop_t *loop, void *arg)
{
    struct drain *d = arg;
    char buf[64];
    for (;;) {
        ssize_t n = read(d->fd, buf, sizeof buf);
        if (n > 0) {
            d->total += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) { /* end of file: nothing more will ever come */
            d->eof = 1;
            loop_remove_reader(loop, d->fd);
        }
        return; /* EAGAIN: empty, wait for the next edge (or an error) */
    }
}
