/* policy.c -- chapter 10: the loop of a thread, as asyncio/events.py's
 * BaseDefaultEventLoopPolicy and its module functions have it in 3.11.
 *
 * Two per-thread slots, and why there are two:
 *   - running_loop (loop.c): which loop this thread is inside
 *     loop_run_forever() of.  Set and cleared by the loop itself.
 *   - current_loop (here): which loop this thread *said* is its own, with
 *     loop_set_event_loop().  Set and cleared by the program.
 * get_event_loop() asks the first, then the second; only the main thread,
 * and only if it never called set_event_loop(), gets a loop made for it.
 *
 * Python keeps the second slot in a threading.local (the policy's _local);
 * C11 has _Thread_local, which is the same thing: each thread sees its own
 * copy, so nothing here needs a lock.  The one global, the policy itself,
 * is written only by loop_set_event_loop_policy(), which policy.h allows
 * only while no other thread uses the policy. */
#define _GNU_SOURCE /* pthread_getname_np; syscall(SYS_gettid) */
#include "policy.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

/* BaseDefaultEventLoopPolicy._loop_factory: NULL means loop_new(). */
static loop_policy_t policy;

/* BaseDefaultEventLoopPolicy._Local: this thread's current loop, and
 * whether set_event_loop() was ever called in this thread. */
static _Thread_local loop_t *current_loop;
static _Thread_local bool set_called;

/* The message of this thread's last refusal.  Per thread, as errno is: the
 * refusals here belong to no loop, so loop_error() has no place for them. */
static _Thread_local char policy_error[128];

static void refuse(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(policy_error, sizeof policy_error, fmt, ap);
    va_end(ap);
    errno = err;
}

const char *loop_policy_error(void)
{
    return policy_error;
}

/* @region thread_name */
/* threading.main_thread(): the thread the process started with.  On Linux
 * its thread id is the process id; macOS asks pthread_main_np(). */
static bool is_main_thread(void)
{
#if defined(__linux__)
    return syscall(SYS_gettid) == getpid();
#else
    return pthread_main_np() != 0;
#endif
}

/* Python numbers threads made without a name: 'Thread-1', 'Thread-2'...
 * (threading._counter).  C threads are numbered the first time they are
 * asked for their name, which is the order a demo creates them in when
 * each asks before the next is made. */
static atomic_uint thread_counter;
static _Thread_local unsigned thread_number; /* 0: not numbered yet */

/* The name Linux gave the process, and every thread that nobody renamed:
 * /proc/self/comm is the main thread's. */
static bool is_process_name(const char *name)
{
    char comm[32] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    if (f == NULL)
        return false;
    if (fgets(comm, sizeof comm, f) == NULL)
        comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    return strcmp(comm, name) == 0;
}

const char *loop_thread_name(char *buf, size_t size)
{
    if (size == 0)
        return buf;
    if (is_main_thread()) {
        snprintf(buf, size, "MainThread");
        return buf;
    }
    /* A name given with pthread_setname_np() is threading.Thread(name=).
     * A thread nobody named still carries the name it inherited (on
     * Linux, its creator's: the process's, when the main thread made it). */
    char name[16] = "";
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 &&
        name[0] != '\0' && !is_process_name(name)) {
        snprintf(buf, size, "%s", name);
        return buf;
    }
    if (thread_number == 0)
        thread_number = atomic_fetch_add(&thread_counter, 1) + 1;
    snprintf(buf, size, "Thread-%u", thread_number);
    return buf;
}
/* @end thread_name */

void loop_set_event_loop_policy(const loop_policy_t *p)
{
    if (p == NULL)
        policy = (loop_policy_t){ NULL, NULL };
    else
        policy = *p;
}

loop_t *loop_new_event_loop(void)
{
    if (policy.new_event_loop != NULL)
        return policy.new_event_loop(policy.ctx);
    return loop_new();
}

/* @region set_event_loop */
void loop_set_event_loop(loop_t *loop)
{
    set_called = true;
    current_loop = loop;
}
/* @end set_event_loop */

/* @region get_event_loop_impl */
loop_t *loop_get_event_loop(void)
{
    /* events.get_event_loop(): inside a running loop, that loop, whatever
     * set_event_loop() said. */
    loop_t *running = loop_get_running_loop();
    if (running != NULL)
        return running;

    /* BaseDefaultEventLoopPolicy.get_event_loop(): the main thread that
     * never chose gets a loop made for it, once. */
    if (current_loop == NULL && !set_called && is_main_thread()) {
        loop_t *loop = loop_new_event_loop();
        if (loop == NULL) {
            int err = errno; /* the factory's reason */
            refuse(err, "could not make a new event loop: %s", strerror(err));
            return NULL;
        }
        loop_set_event_loop(loop);
    }
    if (current_loop == NULL) {
        char name[64];
        refuse(EINVAL, "There is no current event loop in thread '%s'.",
               loop_thread_name(name, sizeof name));
        return NULL;
    }
    return current_loop;
}
/* @end get_event_loop_impl */

loop_t *loop_running_loop(void)
{
    loop_t *running = loop_get_running_loop();
    if (running == NULL)
        refuse(ESRCH, "no running event loop");
    return running;
}

void loop_policy_reset_thread(void)
{
    current_loop = NULL;
    set_called = false;
    policy_error[0] = '\0';
}
