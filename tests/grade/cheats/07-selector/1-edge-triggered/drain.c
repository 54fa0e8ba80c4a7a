/* A cheat for exercise 07.1 (tests/grade.sh --cheats), part 2: one read
 * per call, as given, into a buffer larger than anything the test sends,
 * instead of reading until EAGAIN.  (selector_epoll.c beside it is the
 * worked answer's part 1.)  It passed the test, which now wants the last
 * read of each call to fail with EAGAIN. */
#include "drain.h"

#include <errno.h>
#include <unistd.h>

void drain_reader(loop_t *loop, void *arg)
{
    struct drain *d = arg;
    char buf[1 << 16];
    ssize_t n = read(d->fd, buf, sizeof buf);
    if (n > 0) {
        d->total += (size_t)n;
    } else if (n == 0) {
        d->eof = 1;
        loop_remove_reader(loop, d->fd);
    }
}
