/* drain.c -- chapter 07, exercise 1: a reader that an edge-triggered
 * selector does not stall.
 *
 * As given, drain_reader() reads ONCE per call, as demo_echo's server does.
 * That is right for a level-triggered loop, which calls it again at the
 * next tick while bytes are left; on an edge-triggered one, the bytes left
 * behind wait for the next edge -- which may never come.
 */
#include "drain.h"

#include <errno.h>
#include <unistd.h>

void drain_reader(loop_t *loop, void *arg)
{
    struct drain *d = arg;
    char buf[64];
    /* TODO(1-edge-triggered): read until the socket is empty. */
    ssize_t n = read(d->fd, buf, sizeof buf);
    if (n > 0) {
        d->total += (size_t)n;
    } else if (n == 0) {
        d->eof = 1;
        loop_remove_reader(loop, d->fd);
    }
}
