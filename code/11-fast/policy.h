/* policy.h -- chapter 10: the loop of a thread (article 004 §4, §8.3,
 * §9.2-9.4), as asyncio/events.py has it in 3.11.
 *
 * asyncio keeps two per-thread slots:
 *   - the *running* loop: set by run_forever() for as long as it runs
 *     (loop_get_running_loop() in loop.h already reads it);
 *   - the *current* loop of the policy: what set_event_loop() stored,
 *     what get_event_loop() returns when no loop is running.
 * The policy (BaseDefaultEventLoopPolicy) is one global object: a factory
 * for new loops plus that per-thread slot.  Its rule for get_event_loop():
 * in the main thread, if set_event_loop() was never called there, create a
 * loop and set it; anywhere else with no loop set, refuse with "There is no
 * current event loop in thread 'NAME'."
 *
 * Thread names are Python's: the main thread is 'MainThread'; another
 * thread is named by pthread_setname_np() (as threading.Thread(name=...)),
 * or, unnamed, 'Thread-N' with N its order of first asking (as Python
 * numbers threads at creation).  "Unnamed" is a guess C has to make: Linux
 * gives a new thread its creator's name, so a thread still carrying the
 * process's name counts as unnamed, and one made by a named thread goes
 * by its creator's name (Python would say Thread-N).
 *
 * Every function here may be called from any thread (each acts on the
 * calling thread's slot); loop_set_event_loop_policy() only while no other
 * thread uses the policy. */
#ifndef POLICY_H
#define POLICY_H

#include "loop.h"

typedef struct loop_policy {
    /* new_event_loop(): NULL means loop_new(). */
    loop_t *(*new_event_loop)(void *ctx);
    void *ctx;
} loop_policy_t;

/* asyncio.set_event_loop_policy(policy): NULL restores the default.  The
 * struct is copied. */
void loop_set_event_loop_policy(const loop_policy_t *policy);

/* asyncio.new_event_loop(): the policy's factory.  Not set as current. */
loop_t *loop_new_event_loop(void);

/* @region get_event_loop */
/* asyncio.get_event_loop(): the running loop if this thread runs one;
 * else this thread's current loop; else, in the main thread if
 * loop_set_event_loop() was never called in it, a new loop, now current
 * (this thread's: the caller closes and frees it; it stays current until
 * loop_set_event_loop(NULL)).  NULL with EINVAL and, in
 * loop_policy_error(), "There is no current event loop in thread
 * 'NAME'."  (If the new loop could not be made: NULL, with the factory's errno.) */
loop_t *loop_get_event_loop(void);
/* @end get_event_loop */

/* asyncio.set_event_loop(loop): this thread's current loop (NULL: none,
 * and get_event_loop() will not create one even in the main thread). */
void loop_set_event_loop(loop_t *loop);

/* asyncio.get_running_loop(): the loop this thread is running, or NULL
 * with ESRCH and "no running event loop" in loop_policy_error().
 * (loop_get_running_loop() in loop.h is asyncio._get_running_loop(): NULL
 * without a word.) */
loop_t *loop_running_loop(void);

/* This thread's name, as Python's threading names it (see above). */
const char *loop_thread_name(char *buf, size_t size);

/* The message of this thread's last refusal here ("" if none). */
const char *loop_policy_error(void);

/* Forget this thread's slot (as a thread's end does in Python), for tests:
 * the current loop (not freed) and whether set_event_loop() was called. */
void loop_policy_reset_thread(void);

#endif
