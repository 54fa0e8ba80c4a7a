/* gather.c -- chapter 09: asyncio.gather() and _GatheringFuture (see
 * future.h).  tasks.py's gather() keeps its state in a closure
 * (nfinished, nfuts, children, outer); here it is the gathering future's
 * own struct, and _done_callback gets it as its arg.
 */
#define _POSIX_C_SOURCE 200809L
#include "future_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @region done_callback */
/* def _done_callback(fut): -- each child's done callback; arg is outer. */
static void gather_done_callback(loop_t *loop, future_t *fut, void *arg)
{
    gathering_future_t *g = arg;
    future_t *outer = &g->future;
    loop_exception_t exc;
    int rc = 0;
    /* nfinished += 1
     * if outer is None or outer.done():
     *     if not fut.cancelled():
     *         # Mark exception retrieved.
     *         fut.exception()
     *     return */
    g->nfinished++;
    if (outer->state != FUTURE_PENDING) {
        if (!future_cancelled(fut))
            future_exception(fut, &exc);
        return;
    }
    /* if not return_exceptions:
     *     if fut.cancelled():
     *         exc = fut._make_cancelled_error()
     *         outer.set_exception(exc)
     *         return
     *     else:
     *         exc = fut.exception()
     *         if exc is not None:
     *             outer.set_exception(exc)
     *             return */
    if (!g->return_exceptions) {
        if (future_cancelled(fut)) {
            future_make_cancelled_error(fut, &exc);
            rc = future_base_set_exception(outer, &exc);
            goto out;
        }
        if (future_exception(fut, &exc) == 1) {
            rc = future_base_set_exception(outer, &exc);
            goto out;
        }
    }
    /* if nfinished == nfuts:
     *     results = [CancelledError(msg) / fut.exception() / fut.result()
     *                for fut in children]
     *     if outer._cancel_requested:
     *         exc = fut._make_cancelled_error()
     *         outer.set_exception(exc)
     *     else:
     *         outer.set_result(results) */
    if (g->nfinished == g->nfuts) {
        for (size_t i = 0; i < g->n; i++) {
            future_t *child = g->children[i];
            gather_item_t *item = &g->results->items[i];
            memset(item, 0, sizeof *item);
            if (future_cancelled(child)) {
                item->failed = 1;
                exception_set(&item->error, "CancelledError",
                              child->cancel_message != NULL ? child->cancel_message : "");
            } else if (future_exception(child, &item->error) == 1) {
                item->failed = 1;
            } else {
                future_result(child, &item->value, NULL);
            }
        }
        if (g->cancel_requested) {
            /* `fut` is the loop variable: the last child */
            future_make_cancelled_error(g->children[g->n - 1], &exc);
            rc = future_base_set_exception(outer, &exc);
        } else {
            rc = future_base_set_result(outer, g->results);
        }
    }
out:
    if (rc < 0) /* out of memory: a MemoryError in the callback */
        loop_raise(loop, "MemoryError", "%s", loop_error(loop));
}
/* @end done_callback */

/* @region gather */
future_t *loop_gather(loop_t *loop, future_t *const *children, size_t n, int return_exceptions)
{
    if (loop == NULL || (n > 0 && children == NULL)) {
        errno = EINVAL;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (children[i] == NULL || children[i]->loop != loop) {
            loop_fail(loop, EINVAL, "gather(): child %zu is %s", i,
                      children[i] == NULL ? "NULL" : "a future of another loop");
            return NULL;
        }
    }
    gathering_future_t *g = malloc(sizeof *g);
    future_t **kids = malloc((n > 0 ? n : 1) * sizeof *kids);
    gather_result_t *results = malloc(sizeof *results + n * sizeof results->items[0]);
    done_callback_t **cbs = calloc(n > 0 ? n : 1, sizeof *cbs);
    if (g == NULL || kids == NULL || results == NULL || cbs == NULL)
        goto out_of_memory;
    /* arg_to_fut: a child met before is listed again, but gets no second
     * callback.  `mark` says "met in this call" without a dictionary. */
    size_t nfuts = 0, ndone = 0;
    for (size_t i = 0; i < n; i++) {
        future_t *child = children[i];
        if (child->mark == g)
            continue;
        child->mark = g;
        cbs[nfuts] = done_callback_new(child, gather_done_callback, g, future_release_arg,
                                       "gather.<locals>._done_callback");
        if (cbs[nfuts] == NULL)
            goto out_of_memory;
        ndone += future_done(child);
        nfuts++;
    }
    if (ndone > 0 && loop_reserve_ready(loop, ndone) < 0)
        goto out_of_memory;

    /* Nothing can fail from here on. */
    memset(results, 0, sizeof *results);
    results->n = n;
    future_init(&g->future, loop, FUTURE_KIND_GATHER, n > 0 ? "_GatheringFuture" : "Future");
    g->n = n;
    g->nfuts = nfuts;
    g->nfinished = 0;
    g->return_exceptions = return_exceptions != 0;
    g->cancel_requested = false;
    g->children = kids;
    g->results = results;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        future_t *child = children[i];
        future_retain(child);
        kids[i] = child;
        if (child->mark != g)
            continue; /* listed twice: its callback is added already */
        child->mark = NULL;
        future_retain(&g->future); /* each callback holds outer */
        done_callback_add(child, cbs[k++]); /* fut.add_done_callback(_done_callback) */
    }
    free(cbs);
    if (n == 0) /* outer = loop.create_future(); outer.set_result([]) */
        future_base_set_result(&g->future, results); /* no callbacks: cannot fail */
    return &g->future;

out_of_memory:
    for (size_t i = 0; i < n; i++)
        children[i]->mark = NULL;
    for (size_t i = 0; cbs != NULL && i < n; i++)
        done_callback_discard(cbs[i]);
    free(cbs);
    free(results);
    free(kids);
    free(g);
    loop_fail(loop, ENOMEM, "out of memory for gather()");
    return NULL;
}

/* _GatheringFuture.cancel:
 *     if self.done(): return False
 *     ret = False
 *     for child in self._children:
 *         if child.cancel(msg=msg): ret = True
 *     if ret: self._cancel_requested = True
 *     return ret */
int gather_cancel(gathering_future_t *g, const char *msg)
{
    if (g->future.state != FUTURE_PENDING)
        return 0;
    int ret = 0;
    for (size_t i = 0; i < g->n; i++)
        if (future_cancel(g->children[i], msg) == 1)
            ret = 1;
    if (ret)
        g->cancel_requested = true;
    return ret;
}
/* @end gather */

void gather_destroy(gathering_future_t *g)
{
    for (size_t i = 0; i < g->n; i++)
        future_release(g->children[i]);
    free(g->children);
    free(g->results);
    g->children = NULL;
    g->results = NULL;
    g->n = 0;
}

/* repr() of the result list: [None, 0x55..., RuntimeError('x')]. */
void gather_result_repr(const gathering_future_t *g, char *buf, size_t size)
{
    size_t len = 0;
    len += (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < g->results->n && len < size; i++) {
        const gather_item_t *item = &g->results->items[i];
        char one[200];
        if (item->failed && strcmp(item->error.type, "CancelledError") == 0) {
            /* a cancelled child: CancelledError('' if fut._cancel_message is
             * None else fut._cancel_message), never without an argument */
            char msg[LOOP_EXCEPTION_MESSAGE_MAX + 8];
            str_repr(item->error.message, msg, sizeof msg);
            snprintf(one, sizeof one, "CancelledError(%s)", msg);
        } else if (item->failed)
            exception_repr(&item->error, one, sizeof one);
        else if (item->value == NULL)
            snprintf(one, sizeof one, "None");
        else
            snprintf(one, sizeof one, "%p", item->value);
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i > 0 ? ", " : "", one);
    }
    if (len < size)
        snprintf(buf + len, size - len, "]");
}
