/* scenario.h -- the scenario language of the trace program.
 *
 * A scenario is a small text file (the grammar is the book's appendix and
 * tests/conformance's spec): one action per line, nesting by indentation.
 *
 *     later 0 later0          # top level: run at setup, in file order
 *     soon tick
 *       soon tock             # a child: run each time `tick`'s callback runs
 *     io 0.030 reader         # a byte arrives on reader's socket at 0.030
 *     stop
 *
 * The parser turns the text into a tree of actions and nothing else: it
 * schedules nothing, so a malformed file runs nothing.  A mistake is
 * reported as "FILE:LINE:COL: what is wrong"; on any input the parser
 * returns (no crash, no hang, no leak: it is fuzzed by fuzz_scenario.c).
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stddef.h>

#define SCENARIO_LABEL_MAX 32 /* characters in a label, at most */
#define SCENARIO_IO_MAX 100   /* io labels in a file, at most */
#define SCENARIO_GATHER_MAX 8 /* labels after gather, at most */

typedef enum action_kind {
    ACTION_SOON,       /* soon LABEL */
    ACTION_LATER,      /* later DELAY LABEL */
    ACTION_AT,         /* at WHEN LABEL */
    ACTION_STOP,       /* stop */
    ACTION_IO,         /* io WHEN LABEL (top level only) */
    ACTION_CANCEL,     /* cancel LABEL (stage 05 on) */
    ACTION_THREADSAFE, /* threadsafe LABEL (stage 06 on) */
    /* chapter 08 (stage 08 on): */
    ACTION_RAISE,      /* raise            (nested) the callback fails: RuntimeError(its label) */
    ACTION_INTERRUPT,  /* interrupt        (nested) KeyboardInterrupt(its label) escapes */
    ACTION_BLOCK,      /* block DURATION   (nested) the callback runs DURATION seconds */
    ACTION_DEBUG,      /* debug 0|1        debug mode off or on */
    ACTION_HANDLER,    /* handler default|custom|failing   the exception handler */
    ACTION_RUN,        /* run              run_forever() now (top level), refused nested */
    ACTION_CLOSE,      /* close            close() */
    ACTION_SIGHANDLER, /* sighandler LABEL add_signal_handler(SIGUSR1, LABEL) */
    ACTION_SIGREMOVE,  /* sigremove        remove_signal_handler(SIGUSR1) */
    ACTION_SIGNAL,     /* signal WHEN      (top level) SIGUSR1 arrives at WHEN */
    /* chapter 09 (stage 09 on): futures, tasks, and the BODY of a task or
     * coro (its indented lines: the code of an `async def`) */
    ACTION_FUTURE,     /* future F          loop.create_future() */
    ACTION_TASK,       /* task T + body     loop.create_task(T()) */
    ACTION_CORO,       /* coro C + body     (top level) defines C; runs nothing */
    ACTION_SET,        /* set F V           F.set_result(V) */
    ACTION_FAIL,       /* fail F            F.set_exception(RuntimeError('F')) */
    ACTION_RUN_UNTIL,  /* run_until X       (top level) loop.run_until_complete(X) */
    ACTION_MAIN,       /* main C            (top level) asyncio.run(C()) on this loop */
    ACTION_SLEEP,      /* sleep D           (body) await asyncio.sleep(D) */
    ACTION_AWAIT,      /* await X           (body) await X, a future or a task */
    ACTION_CALL,       /* call C            (body) await C(): no task */
    ACTION_GATHER,     /* gather X Y ...    (body) await asyncio.gather(X, Y, ...) */
    ACTION_GATHER_EXCEPTIONS, /* gather_exceptions X ...  the same, return_exceptions=True */
    ACTION_WAIT_FOR,   /* wait_for X D      (body) await asyncio.wait_for(X, D) */
    ACTION_RETURN,     /* return V          (body) return V */
    ACTION_CATCH,      /* catch             (body) from here on, an await's error is caught */
} action_kind;

/* handler WORD */
typedef enum handler_kind { HANDLER_DEFAULT, HANDLER_CUSTOM, HANDLER_FAILING } handler_kind;

/* @region action */
/* A label that a stage-09 line names (await X, gather X Y, ...): the line
 * that defines it, and where it was written. */
typedef struct action_ref {
    const struct action *def;            /* set once the whole file is read */
    char label[SCENARIO_LABEL_MAX + 1];
    long col;
} action_ref_t;

/* One line of the scenario.  Its children (the lines indented under it)
 * are run, in order, each time its callback runs; a task's or coro's
 * children are its body. */
typedef struct action {
    action_kind kind;
    double number;                        /* DELAY, WHEN, DURATION, 0|1; 0 if none */
    handler_kind handler;                 /* handler: which */
    char label[SCENARIO_LABEL_MAX + 1];   /* "" for stop */
    int io;                               /* io: index of its label among io labels */
    long call;                            /* a line that defines a label (soon, later, at, */
                                          /*   threadsafe, sighandler, future, task, coro): */
                                          /*   its rank among them; cancel: its target's */
    char value[SCENARIO_LABEL_MAX + 1];   /* return V, set F V: the word V */
    action_ref_t *refs;                   /* stage 09: the labels it names, in order */
    int nrefs;                            /*   (malloc'ed; cancel's is in label / call) */
    int body;                             /* 1: a line of a task's or coro's body */
    long line;                            /* where it was written */
    long label_col;                       /* and its label's column */
    struct action *children;              /* first child, or NULL */
    struct action *next;                  /* next sibling, or NULL */
    struct action *all_next;              /* every action, for freeing */
} action_t;

typedef struct scenario {
    action_t *actions;   /* the top-level lines, in file order */
    action_t **io;       /* io[k]: the first io line of the k-th io label, */
    int nio;             /*   in order of first appearance */
    long ncalls;         /* lines that define a label, io lines excepted */
    action_t *all;       /* every action (owning list) */
} scenario_t;
/* @end action */

/* Parse text[0 .. len) as the scenario `filename`, for stage `stage`
 * (cancel needs 5, threadsafe 6, chapter 08's verbs 8, chapter 09's 9).  0 on success.  -1 for a malformed scenario, with *err
 * set to "FILE:LINE:COL: message" (malloc'ed: free it), or, if memory ran
 * out, to "FILE: out of memory" (or NULL).  *out is then empty. */
int scenario_parse(const char *text, size_t len, const char *filename,
                   int stage, scenario_t *out, char **err);

/* The bytes of the file at path (malloc'ed, *len of them), or NULL with
 * errno set. */
char *scenario_read_file(const char *path, size_t *len);

/* Free every action; *s is then empty.  Safe on an empty scenario. */
void scenario_free(scenario_t *s);

#endif
