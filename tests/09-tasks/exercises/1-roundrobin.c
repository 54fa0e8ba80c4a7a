/* Exercise 1 (chapter 09): the heart of a scheduler of coroutines.
 *
 * Article 004's exercise 1 (题目1) asks for a TinyEventLoop whose tasks are
 * generators that yield.  roundrobin.c is that loop without its clock: a
 * ring of coroutines ready to go on.  Write rr_run()'s loop body: take the
 * first coroutine, step it once, and then
 *   - it yielded: queue it again, at the back;
 *   - it returned or raised: count it (rr->returned, or rr->failed and,
 *     for the first, rr->error) and call its release function, once;
 *   - it awaited a future or called another coroutine: refuse it, as
 *     Task.__step refuses a bad yield: it finishes with a RuntimeError
 *     whose message says "bad yield".
 * rr->steps counts every step; rr->running is the coroutine being stepped
 * (rr_spawn keeps a slot for it).  A coroutine spawned during a step runs
 * after the ones already waiting and before the one that spawned it.
 *
 * rr->running is looked at during each step, not only once rr_run() has
 * returned: a loop body without it passes every other check, and loses a
 * coroutine when the ring is full (the last test): the running one's slot
 * is taken by a coroutine it spawned, and it has nowhere to go back to.
 */
#define _POSIX_C_SOURCE 200809L
#include "roundrobin.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "labels.h"

/* A coroutine of `steps` steps that logs "NAMEi" at step i, raises at
 * step fail_at, spawns `child` at step 1, and calls `inner` (CORO_CALL,
 * which a round robin must refuse) at step call_at. */
typedef struct worker {
    coro_t coro;
    rr_t *rr;
    int steps, i, fail_at, call_at;
    struct worker *child;
    coro_t *inner;
    int full;         /* its child's spawn is expected to be refused (ENOSPC) */
    int spawned;      /* what rr_spawn returned for the child */
    int released;     /* times release was called */
    int nran_at_release; /* nran when it was */
} worker_t;

static coro_status worker_step(coro_t *c)
{
    worker_t *w = (worker_t *)c;
    char label[32];
    ck_assert_msg(w->rr->running == c, "%s is being stepped, and rr->running is not it",
                  c->name);
    CORO_BEGIN(c);
    for (w->i = 1; w->i <= w->steps; w->i++) {
        snprintf(label, sizeof label, "%s%d", c->name, w->i);
        label_add(label);
        if (w->i == 1 && w->child != NULL) {
            w->spawned = rr_spawn(w->rr, &w->child->coro);
            if (!w->full)
                ck_assert_int_eq(w->spawned, 0);
        }
        if (w->i == w->fail_at)
            CORO_RAISE(c, "ValueError", "%s failed at %d", c->name, w->i);
        if (w->i == w->call_at)
            CORO_CALL(c, w->inner);
        if (w->i < w->steps)
            CORO_YIELD(c);
    }
    CORO_END(c);
}

static void worker_release(coro_t *c)
{
    worker_t *w = (worker_t *)c;
    w->released++;
    w->nran_at_release = nran;
}

static coro_t *worker(worker_t *w, rr_t *rr, const char *name, int steps)
{
    memset(w, 0, sizeof *w);
    w->rr = rr;
    w->steps = steps;
    return coro_init(&w->coro, worker_step, name, worker_release);
}

static coro_status never_step(coro_t *c)
{
    label_add("inner");
    CORO_BEGIN(c);
    CORO_END(c);
}

START_TEST(turns_in_order)
{
    rr_t rr;
    worker_t a, b, c;
    labels_reset();
    rr_init(&rr);
    ck_assert_int_eq(rr_spawn(&rr, worker(&a, &rr, "a", 3)), 0);
    ck_assert_int_eq(rr_spawn(&rr, worker(&b, &rr, "b", 1)), 0);
    ck_assert_int_eq(rr_spawn(&rr, worker(&c, &rr, "c", 2)), 0);
    ck_assert_int_eq(rr_run(&rr), 0);
    ck_assert_str_eq(ran, "a1 b1 c1 a2 c2 a3");
    ck_assert_uint_eq(rr.steps, 6);
    ck_assert_uint_eq(rr.returned, 3);
    ck_assert_uint_eq(rr.failed, 0);
    ck_assert_uint_eq(rr.count, 0);
    ck_assert_ptr_null(rr.running);
}
END_TEST

START_TEST(released_once_after_the_last_step)
{
    rr_t rr;
    worker_t a, b;
    labels_reset();
    rr_init(&rr);
    rr_spawn(&rr, worker(&a, &rr, "a", 4));
    rr_spawn(&rr, worker(&b, &rr, "b", 2));
    ck_assert_int_eq(rr_run(&rr), 0);
    ck_assert_str_eq(ran, "a1 b1 a2 b2 a3 a4");
    ck_assert_int_eq(a.released, 1);
    ck_assert_int_eq(b.released, 1);
    ck_assert_int_eq(b.nran_at_release, 4); /* right after b2 */
    ck_assert_int_eq(a.nran_at_release, 6);
}
END_TEST

START_TEST(spawned_goes_behind_the_waiting_and_before_its_parent)
{
    rr_t rr;
    worker_t a, b, c, d;
    labels_reset();
    rr_init(&rr);
    rr_spawn(&rr, worker(&a, &rr, "a", 2));
    rr_spawn(&rr, worker(&b, &rr, "b", 3));
    rr_spawn(&rr, worker(&c, &rr, "c", 2));
    worker(&d, &rr, "d", 2);
    b.child = &d;
    ck_assert_int_eq(rr_run(&rr), 0);
    ck_assert_str_eq(ran, "a1 b1 c1 a2 d1 b2 c2 d2 b3");
    ck_assert_uint_eq(rr.returned, 4);
    ck_assert_int_eq(d.released, 1);
}
END_TEST

START_TEST(an_error_ends_one_coroutine_only)
{
    rr_t rr;
    worker_t a, b, c;
    labels_reset();
    rr_init(&rr);
    rr_spawn(&rr, worker(&a, &rr, "a", 3));
    rr_spawn(&rr, worker(&b, &rr, "b", 3));
    rr_spawn(&rr, worker(&c, &rr, "c", 4));
    b.fail_at = 2;
    c.fail_at = 3;
    ck_assert_int_eq(rr_run(&rr), -1);
    ck_assert_str_eq(ran, "a1 b1 c1 a2 b2 c2 a3 c3");
    ck_assert_uint_eq(rr.steps, 8);
    ck_assert_uint_eq(rr.returned, 1);
    ck_assert_uint_eq(rr.failed, 2);
    ck_assert_str_eq(rr.error.type, "ValueError"); /* the first error, b's */
    ck_assert_str_eq(rr.error.message, "b failed at 2");
    ck_assert_int_eq(b.released, 1);
    ck_assert_int_eq(c.released, 1);
}
END_TEST

START_TEST(awaiting_is_a_bad_yield)
{
    rr_t rr;
    worker_t a, b;
    coro_t inner;
    labels_reset();
    rr_init(&rr);
    rr_spawn(&rr, worker(&a, &rr, "a", 3));
    rr_spawn(&rr, worker(&b, &rr, "b", 3));
    b.call_at = 1;
    b.inner = coro_init(&inner, never_step, "inner", NULL);
    ck_assert_int_eq(rr_run(&rr), -1);
    ck_assert_str_eq(ran, "a1 b1 a2 a3"); /* inner never ran, b ended */
    ck_assert_uint_eq(rr.failed, 1);
    ck_assert_uint_eq(rr.returned, 1);
    ck_assert_str_eq(rr.error.type, "RuntimeError");
    ck_assert_ptr_nonnull(strstr(rr.error.message, "bad yield"));
    ck_assert_int_eq(b.released, 1);
}
END_TEST

START_TEST(the_running_coroutine_keeps_its_slot)
{
    static worker_t w[RR_MAX + 1];
    rr_t rr;
    labels_reset();
    rr_init(&rr);
    for (int i = 0; i < RR_MAX; i++)
        ck_assert_int_eq(rr_spawn(&rr, worker(&w[i], &rr, "w", 2)), 0);
    errno = 0;
    ck_assert_int_eq(rr_spawn(&rr, worker(&w[RR_MAX], &rr, "x", 1)), -1);
    ck_assert_int_eq(errno, ENOSPC);
    ck_assert_int_eq(rr_run(&rr), 0);
    ck_assert_uint_eq(rr.returned, RR_MAX);
    ck_assert_uint_eq(rr.steps, 2 * RR_MAX);
    ck_assert_int_eq(w[RR_MAX].released, 0);
}
END_TEST

START_TEST(a_full_ring_refuses_a_spawn_not_its_parent)
{
    static worker_t w[RR_MAX], child;
    rr_t rr;
    labels_reset();
    rr_init(&rr);
    for (int i = 0; i < RR_MAX; i++)
        ck_assert_int_eq(rr_spawn(&rr, worker(&w[i], &rr, "w", 2)), 0);
    worker(&child, &rr, "x", 1);
    w[0].child = &child; /* spawned during w[0]'s first step: the ring is full */
    w[0].full = 1;
    errno = 0;
    rr_run(&rr);
    ck_assert_msg(w[0].spawned == -1 && errno == ENOSPC,
                  "a spawn during a step, with RR_MAX coroutines counting the running one, "
                  "must be refused with ENOSPC (the running one keeps its slot)");
    ck_assert_int_eq(w[0].released, 1); /* it went back in, and finished */
    ck_assert_uint_eq(rr.returned, RR_MAX);
    ck_assert_uint_eq(rr.steps, 2 * RR_MAX);
    ck_assert_int_eq(child.released, 0);
}
END_TEST

static Suite *exercise_suite(void)
{
    Suite *s = suite_create("09/1-roundrobin");
    TCase *tc = tcase_create("roundrobin");
    tcase_add_test(tc, turns_in_order);
    tcase_add_test(tc, released_once_after_the_last_step);
    tcase_add_test(tc, spawned_goes_behind_the_waiting_and_before_its_parent);
    tcase_add_test(tc, an_error_ends_one_coroutine_only);
    tcase_add_test(tc, awaiting_is_a_bad_yield);
    tcase_add_test(tc, the_running_coroutine_keeps_its_slot);
    tcase_add_test(tc, a_full_ring_refuses_a_spawn_not_its_parent);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(exercise_suite());
}
