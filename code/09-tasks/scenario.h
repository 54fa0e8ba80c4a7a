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
} action_kind;

/* handler WORD */
typedef enum handler_kind { HANDLER_DEFAULT, HANDLER_CUSTOM, HANDLER_FAILING } handler_kind;

/* @region action */
/* One line of the scenario.  Its children (the lines indented under it)
 * are run, in order, each time its callback runs. */
typedef struct action {
    action_kind kind;
    double number;                        /* DELAY, WHEN, DURATION, 0|1; 0 if none */
    handler_kind handler;                 /* handler: which */
    char label[SCENARIO_LABEL_MAX + 1];   /* "" for stop */
    int io;                               /* io: index of its label among io labels */
    long call;                            /* a call (soon, later, at, threadsafe): its */
                                          /*   rank among the calls; cancel: its target's */
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
    long ncalls;         /* calls: soon, later, at and threadsafe lines */
    action_t *all;       /* every action (owning list) */
} scenario_t;
/* @end action */

/* Parse text[0 .. len) as the scenario `filename`, for stage `stage`
 * (cancel needs 5, threadsafe 6, chapter 08's verbs 8).  0 on success.  -1 for a malformed scenario, with *err
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
