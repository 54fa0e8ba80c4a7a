/* failalloc.h -- make the Nth allocation fail, as SQLite's tests do.
 *
 * A suite that includes this file is linked with
 *     -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
 * (its NAME_LDFLAGS line in tests/suites.mk), so every call to malloc,
 * calloc and realloc in the suite AND in the stage's libloop.a goes to the
 * __wrap_ functions below, which count it and pass it on to the real one
 * -- unless it is the one chosen to fail.  The lesson's code is not
 * changed in any way.  (Check's own allocations are counted too: a test
 * arms the hook only around calls into the loop.)
 *
 *     failalloc_arm(N, persistent);   N >= 1: the Nth allocation from now
 *                                     fails (and, if persistent, every one
 *                                     after it); N == 0: none fails
 *     failalloc_disarm();             from now on none fails
 *     failalloc_count                 allocations since failalloc_arm()
 *     failalloc_failed                how many of them failed
 *
 * A failed allocation returns NULL with errno ENOMEM, as malloc does.
 * The count is per thread (chapter 10's suites run pools): arming it fails
 * the Nth allocation of the thread that armed it, never another thread's. */
#ifndef TESTS_SUPPORT_FAILALLOC_H
#define TESTS_SUPPORT_FAILALLOC_H

#include <errno.h>
#include <stddef.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t nmemb, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t nmemb, size_t size);
void *__wrap_realloc(void *ptr, size_t size);

static _Thread_local long failalloc_count;
static _Thread_local long failalloc_at;        /* 0: never fail */
static _Thread_local int failalloc_persistent; /* fail every allocation after the Nth too */
static _Thread_local long failalloc_failed;

static inline void failalloc_arm(long n, int persistent)
{
    failalloc_count = 0;
    failalloc_failed = 0;
    failalloc_at = n;
    failalloc_persistent = persistent;
}

static inline void failalloc_disarm(void)
{
    failalloc_at = 0;
}

static inline int failalloc_now(void)
{
    long n = ++failalloc_count;
    if (failalloc_at > 0 &&
        (n == failalloc_at || (failalloc_persistent && n > failalloc_at))) {
        failalloc_failed++;
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t size)
{
    return failalloc_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t nmemb, size_t size)
{
    return failalloc_now() ? NULL : __real_calloc(nmemb, size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
    return failalloc_now() ? NULL : __real_realloc(ptr, size);
}

#endif
