/* counting.h -- chapter 11's exercises count what the loop asks of malloc
 * and of pthread_mutex_lock, and can make malloc fail.
 *
 * The test program defines malloc, calloc, realloc and pthread_mutex_lock
 * itself.  The dynamic linker binds every call in the process -- the
 * loop's, and libc's own -- to the program's definition first (symbol
 * interposition: the way an allocator given with LD_PRELOAD replaces
 * glibc's), and these count the call and pass it on to glibc's.  Nothing
 * in the loop's code changes, and no link option is needed: an exercise
 * is built as every other chapter's is.
 *
 *     counted_mallocs        allocations of this thread so far
 *     counted_locks          pthread_mutex_lock() calls of this thread
 *     counting_fail(1)       from now on, this thread's allocations fail
 *                            (NULL, ENOMEM); counting_fail(0) ends it
 *
 * Per thread, as tests/support/failalloc.h counts: the loop's thread is
 * the one measured; another thread's posts, or Check's, are not.
 *
 * AddressSanitizer, ThreadSanitizer and valgrind bring allocators of their
 * own.  Under the two sanitizers the program must not define malloc (they
 * define it): COUNTING is 0 there.  valgrind redirects the program's own
 * malloc to its allocator, as it does glibc's.  In both cases the tests
 * that count say they were skipped (counting_mallocs(), counting_locks()):
 * the tests that check the pool's poisoning and the threads' races are the
 * ones that need those tools. */
#ifndef EXERCISES_11_COUNTING_H
#define EXERCISES_11_COUNTING_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* RTLD_NEXT: include this file first */
#endif
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNTING_SANITIZER 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COUNTING_SANITIZER 1
#endif
#endif

#if defined(__GLIBC__) && !defined(COUNTING_SANITIZER)
#define COUNTING 1
#else
#define COUNTING 0
#endif

#if defined(__GNUC__)
#define COUNTING_MAYBE_UNUSED __attribute__((unused)) /* a test may count only locks */
#else
#define COUNTING_MAYBE_UNUSED
#endif
static _Thread_local long counted_mallocs COUNTING_MAYBE_UNUSED;
static _Thread_local long counted_locks COUNTING_MAYBE_UNUSED;
static _Thread_local int counting_failing COUNTING_MAYBE_UNUSED;

static inline void counting_fail(int on)
{
    counting_failing = on;
}

/* Whether this program's malloc and pthread_mutex_lock are the ones called:
 * they are not under a sanitizer (COUNTING is 0), nor under valgrind,
 * which redirects the program's own malloc to its allocator too.  A test
 * that counts asks first, and says it was skipped if not. */
static inline int counting_mallocs(void)
{
    /* Through volatile, both: gcc assumes that malloc (a builtin) changes
     * no variable of the program, and would read the count once; and it
     * would inline this file's malloc here, where valgrind cannot redirect
     * it (the loop's calls reach it through its address, which valgrind
     * does redirect). */
    void *(*volatile allocate)(size_t) = malloc;
    volatile long *count = &counted_mallocs;
    long before = *count;
    void *volatile p = allocate(1);
    free(p);
    return *count > before;
}

static inline int counting_locks(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    int (*volatile lock)(pthread_mutex_t *) = pthread_mutex_lock; /* as above */
    volatile long *count = &counted_locks;
    long before = *count;
    lock(&m);
    pthread_mutex_unlock(&m);
    return *count > before;
}

#if COUNTING
#include <dlfcn.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t nmemb, size_t size);
void *__libc_realloc(void *ptr, size_t size);

void *malloc(size_t size)
{
    counted_mallocs++;
    if (counting_failing) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(size);
}

void *calloc(size_t nmemb, size_t size)
{
    counted_mallocs++;
    if (counting_failing) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(nmemb, size);
}

void *realloc(void *ptr, size_t size)
{
    counted_mallocs++;
    if (counting_failing) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(ptr, size);
}

/* glibc's own pthread_mutex_lock, found once (the next definition after
 * this program's). */
static int (*real_mutex_lock)(pthread_mutex_t *);

int pthread_mutex_lock(pthread_mutex_t *mutex)
{
    if (real_mutex_lock == NULL)
        real_mutex_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
    counted_locks++;
    return real_mutex_lock(mutex);
}
#endif

#endif
