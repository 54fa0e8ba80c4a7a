/* executor_private.h -- chapter 10: what cfuture.c, executor.c and bridge.c
 * lend one another.  Not part of the interface: a program includes
 * executor.h only. */
#ifndef EXECUTOR_PRIVATE_H
#define EXECUTOR_PRIVATE_H

#include "executor.h"

/* The message executor_last_error() returns, for this thread; errno =
 * err.  Returns -1, as loop_fail() does. */
int executor_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reference counts that owners in several threads share (a cfuture's, a
 * chain's in bridge.c), under one process-wide mutex (cfuture.c).  Why not
 * C11 atomics: helgrind, which checks this chapter's threads, cannot see
 * the order they give, and reports the free after a last release.  Why not
 * the object's own mutex: the last release would destroy the mutex that
 * another thread has just unlocked, which helgrind reports too.  A count
 * is held for two instructions: one mutex for all costs little. */
void refs_add(unsigned *refs);
unsigned refs_drop(unsigned *refs); /* what is left: 0, free the object */

/* add_done_callback(fn) whose entry owns arg: release(arg) is called once
 * the entry goes -- after fn ran, or unrun, when the last reference to a
 * future that never finished goes.  On failure release is NOT called. */
int cfuture_add_done_callback_owned(cfuture_t *f, cfuture_callback fn, void *arg,
                                    void (*release)(void *arg));

#endif
