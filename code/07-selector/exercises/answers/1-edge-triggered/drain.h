/* drain.h -- chapter 07, exercise 1: a reader for an edge-triggered loop. */
#ifndef DRAIN_H
#define DRAIN_H

#include "loop.h"
#include <stddef.h>

/* What drain_reader() keeps between calls. */
struct drain {
    int fd;          /* a non-blocking socket */
    size_t total;    /* bytes read so far */
    int eof;         /* 1 once read() returned 0: the peer closed */
};

/* The reader callback: loop_add_reader(loop, d.fd, drain_reader, &d).
 * On an edge-triggered selector the loop calls it once per edge (new bytes
 * arrived), not once per tick while bytes are left: each call must leave
 * the socket empty.  On end of file it sets eof and removes itself. */
void drain_reader(loop_t *loop, void *arg);

#endif
