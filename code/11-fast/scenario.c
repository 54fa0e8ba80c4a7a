/* scenario.c -- the scenario parser (see scenario.h and the grammar).
 *
 * One pass over the lines.  Each line is cut into words; the first word
 * names the action, the others are its number and label.  Its indentation
 * says where it goes in the tree: a stack holds the chain of lines from the
 * top level down to the previous line, so a deeper line is a child of the
 * previous line, and a shallower one closes lines until it meets its
 * sibling.  Labels are checked for uniqueness as they come, in a hash
 * table; what cancel refers to is checked at the end, when every label is
 * known.  Every step costs the same on the millionth line as on the first:
 * parsing takes time linear in the size of the file.
 */
#define _POSIX_C_SOURCE 200809L
#include "scenario.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS (SCENARIO_GATHER_MAX + 2) /* the most a line may hold (gather and */
                                            /*   its labels), and one more */
#define NUMBER_MAX 1e9

typedef struct word {
    const char *s;
    size_t len;
    long col; /* 1-based */
} word_t;

/* The chain of open levels: frames[0] is the top level.  Each level knows
 * its indentation, its most recent line (the parent of a deeper line) and
 * where its next line goes. */
typedef struct frame {
    long indent;
    action_t *parent; /* the line the level is under; NULL at the top level */
    action_t *last;   /* the level's most recent line; NULL before the first */
    action_t **tail;  /* where the level's next line goes */
} frame_t;

typedef struct parser {
    const char *filename;
    int stage;
    scenario_t *s;
    char **err;
    long line;
    frame_t *frames;
    size_t nframes, capframes;
    int capio;
    action_t **all_tail; /* the end of s->all: actions in file order */
    action_t **labels;   /* the labels defined so far: a hash table (below) */
    size_t caplabels, nlabels;
    char *words;         /* room for the words an error message quotes */
    size_t capwords;
} parser_t;

/* The message is built in memory of its own: a word quoted in it may be as
 * long as its line. */
static int error_at(parser_t *p, long col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    int head = snprintf(NULL, 0, "%s:%ld:%ld: ", p->filename, p->line, col);
    if (n < 0 || head < 0)
        return -1;
    free(*p->err);
    *p->err = malloc((size_t)head + (size_t)n + 1);
    if (*p->err == NULL)
        return -1;
    snprintf(*p->err, (size_t)head + 1, "%s:%ld:%ld: ", p->filename, p->line, col);
    va_start(ap, fmt);
    vsnprintf(*p->err + head, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return -1;
}

static int out_of_memory(parser_t *p)
{
    free(*p->err);
    *p->err = NULL; /* scenario_parse then reports "out of memory" */
    return -1;
}

/* ---- pass 0: bytes ----------------------------------------------------- */

/* The offset of the first byte of the first invalid UTF-8 sequence (what
 * Python's strict decoder reports as the error's start), or len. */
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF; /* range of the 2nd byte */
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0; /* overlong */
            if (c == 0xED)
                hi = 0x9F; /* surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90; /* overlong */
            if (c == 0xF4)
                hi = 0x8F; /* above U+10FFFF */
        } else {
            return i; /* a continuation byte, C0, C1, F5..FF */
        }
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= len)
                return i; /* truncated */
            unsigned char b = s[i + k];
            unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
            if (b < l || b > h)
                return i;
        }
        i += need + 1;
    }
    return len;
}

/* The whole file, before any line: invalid UTF-8 and control characters
 * (other than tab and newline), whichever comes first. */
static int check_bytes(parser_t *p, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t bad_utf8 = utf8_invalid_at(s, len), ctrl = 0;
    while (ctrl < len && !(s[ctrl] <= 0x1F && s[ctrl] != '\t' && s[ctrl] != '\n') &&
           s[ctrl] != 0x7F)
        ctrl++;
    size_t at = bad_utf8 < ctrl ? bad_utf8 : ctrl;
    if (at == len)
        return 0;
    size_t bol = at;
    p->line = 1;
    for (size_t k = 0; k < at; k++)
        if (s[k] == '\n')
            p->line++;
    while (bol > 0 && s[bol - 1] != '\n')
        bol--;
    long col = (long)(at - bol) + 1;
    if (at == bad_utf8)
        return error_at(p, col, "invalid UTF-8 (byte 0x%02X)", s[at]);
    if (s[at] == '\r')
        return error_at(p, col, "carriage return (line endings must be \\n, not \\r\\n)");
    return error_at(p, col, "control character 0x%02X is not allowed", s[at]);
}

/* ---- words: numbers and labels ------------------------------------------ */

/* NUMBER: -?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)? -- nothing else (no inf,
 * nan, hex, leading '+' or '.5'), so that strtod() and Python's float()
 * read every accepted spelling as the same, correctly rounded, double. */
static bool is_number(const word_t *w)
{
    size_t i = 0, n = w->len, start;
    const char *s = w->s;
    if (i < n && s[i] == '-')
        i++;
    for (start = i; i < n && s[i] >= '0' && s[i] <= '9';)
        i++;
    if (i == start)
        return false;
    if (i < n && s[i] == '.') {
        for (start = ++i; i < n && s[i] >= '0' && s[i] <= '9';)
            i++;
        if (i == start)
            return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        for (start = i; i < n && s[i] >= '0' && s[i] <= '9';)
            i++;
        if (i == start)
            return false;
    }
    return i == n;
}

/* LABEL: [A-Za-z_][A-Za-z0-9_]* */
static bool is_label(const word_t *w)
{
    for (size_t i = 0; i < w->len; i++) {
        char c = w->s[i];
        bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        if (!alpha && (i == 0 || c < '0' || c > '9'))
            return false;
    }
    return w->len > 0;
}

/* strtod needs a terminated string; a word is a slice of the line. */
static int to_double(parser_t *p, const word_t *w, double *out)
{
    char *copy = malloc(w->len + 1);
    if (copy == NULL)
        return out_of_memory(p);
    memcpy(copy, w->s, w->len);
    copy[w->len] = '\0';
    *out = strtod(copy, NULL); /* underflow gives 0, as float() does */
    free(copy);
    return 0;
}

/* ---- labels ------------------------------------------------------------- */

/* Every label defined so far is in a hash table: open addressing with
 * linear probing, FNV-1a hashes, a power-of-two size that doubles when the
 * table is half full.  A lookup costs the same in a file of a million lines
 * as in one of ten (a search through the earlier lines, as this parser once
 * made, took 2.5 s for 40,000 lines). */
static uint32_t label_hash(const char *label)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)label; *c != '\0'; c++)
        h = (h ^ *c) * 16777619u;
    return h;
}

/* Where label is in the table, or the empty slot where it would go. */
static action_t **label_slot(action_t **table, size_t cap, const char *label)
{
    size_t i = label_hash(label) & (cap - 1);
    while (table[i] != NULL && strcmp(table[i]->label, label) != 0)
        i = (i + 1) & (cap - 1);
    return &table[i];
}

/* The line that defined label (a soon, later, at or threadsafe line, or
 * the first io line of an io label), or NULL. */
static action_t *find_label(const parser_t *p, const char *label)
{
    return p->caplabels > 0 ? *label_slot(p->labels, p->caplabels, label) : NULL;
}

/* a defines its label, which is not in the table yet. */
static int add_label(parser_t *p, action_t *a)
{
    if (2 * (p->nlabels + 1) > p->caplabels) {
        size_t cap = p->caplabels ? 2 * p->caplabels : 64;
        action_t **table = calloc(cap, sizeof *table);
        if (table == NULL)
            return out_of_memory(p);
        for (size_t i = 0; i < p->caplabels; i++)
            if (p->labels[i] != NULL)
                *label_slot(table, cap, p->labels[i]->label) = p->labels[i];
        free(p->labels);
        p->labels = table;
        p->caplabels = cap;
    }
    *label_slot(p->labels, p->caplabels, a->label) = a;
    p->nlabels++;
    return 0;
}

/* A soon / later / at / threadsafe line's label must be new; an io line's
 * label may be that of an earlier io line, whose socket it then shares. */
static int define_label(parser_t *p, action_t *a, long col)
{
    action_t *seen = find_label(p, a->label);
    if (a->kind == ACTION_IO && (seen == NULL || seen->kind == ACTION_IO)) {
        if (seen != NULL) {
            a->io = seen->io;
            return 0;
        }
        if (p->s->nio >= SCENARIO_IO_MAX)
            return error_at(p, col, "too many io labels (at most %d)", SCENARIO_IO_MAX);
        if (p->s->nio == p->capio) {
            int cap = p->capio ? 2 * p->capio : 4;
            action_t **io = realloc(p->s->io, (size_t)cap * sizeof *io);
            if (io == NULL)
                return out_of_memory(p);
            p->s->io = io;
            p->capio = cap;
        }
        a->io = p->s->nio;
        p->s->io[p->s->nio++] = a;
        return add_label(p, a);
    }
    if (seen != NULL)
        return error_at(p, col, "label '%s' is already defined on line %ld", a->label,
                        seen->line);
    a->call = p->s->ncalls++;
    return add_label(p, a);
}

/* ---- one line ----------------------------------------------------------- */

static int push_frame(parser_t *p, long indent, action_t *parent, action_t **tail)
{
    if (p->nframes == p->capframes) {
        size_t cap = p->capframes ? 2 * p->capframes : 16;
        frame_t *f = realloc(p->frames, cap * sizeof *f);
        if (f == NULL)
            return out_of_memory(p);
        p->frames = f;
        p->capframes = cap;
    }
    p->frames[p->nframes++] = (frame_t){indent, parent, NULL, tail};
    return 0;
}

static const char *kind_name(action_kind k)
{
    static const char *names[] = {"soon",      "later",   "at",    "stop",  "io",
                                  "cancel",    "threadsafe", "raise", "interrupt",
                                  "block",     "debug",   "handler", "run",   "close",
                                  "sighandler", "sigremove", "signal",
                                  "future",    "task",    "coro",  "set",   "fail",
                                  "run_until", "main",    "sleep", "await", "call",
                                  "gather",    "gather_exceptions", "wait_for",
                                  "return",    "catch"};
    return names[k];
}

/* Does a line of this kind have children?  A callback's lines (soon,
 * later, at, io, threadsafe, sighandler) or a body (task, coro). */
static bool has_children(action_kind k)
{
    return k == ACTION_SOON || k == ACTION_LATER || k == ACTION_AT || k == ACTION_IO ||
           k == ACTION_THREADSAFE || k == ACTION_SIGHANDLER || k == ACTION_TASK ||
           k == ACTION_CORO;
}

/* @region structure */
/* Which level does a line with this indentation join?  Deeper than the
 * line above: a new level, under that line, which must be a call with a
 * label.  Otherwise close the deeper levels; the line must then line up
 * with one that is still open. */
static int find_level(parser_t *p, long indent)
{
    long col = indent + 1;
    frame_t *top = &p->frames[p->nframes - 1];
    if (indent > top->indent) {
        action_t *parent = top->last;
        if (parent == NULL)
            return error_at(p, col, "first action line is indented "
                                    "(top-level lines start in column 1)");
        if (!has_children(parent->kind))
            return error_at(p, col, "'%s' cannot have children", kind_name(parent->kind));
        if (parent->kind == ACTION_IO && p->s->io[parent->io] != parent)
            return error_at(p, col,
                            "children of io label '%s' must be under its first io line "
                            "(line %ld)", parent->label, p->s->io[parent->io]->line);
        return push_frame(p, indent, parent, &parent->children);
    }
    while (p->frames[p->nframes - 1].indent > indent)
        p->nframes--; /* frames[0] has indent 0: it always stays */
    if (p->frames[p->nframes - 1].indent != indent)
        return error_at(p, col, "indentation of %ld spaces matches no outer level", indent);
    return 0;
}
/* @end structure */

/* What each verb takes, one letter per argument: L a label it defines (or,
 * for cancel and handler, names), N a number, R a label it refers to, V a
 * word it passes along (return V), G one to SCENARIO_GATHER_MAX labels it
 * refers to.  And where it may be: anywhere, only in a body, only at the
 * top level, anywhere but a body. */
enum place { ANYWHERE, BODY_ONLY, TOP_ONLY, NOT_IN_BODY };

static const struct {
    const char *name;
    action_kind kind;
    const char *args;
    int stage; /* the first stage that has it */
    enum place place;
} verbs[] = {
    {"soon", ACTION_SOON, "L", 3, ANYWHERE},     {"later", ACTION_LATER, "NL", 3, ANYWHERE},
    {"at", ACTION_AT, "NL", 3, ANYWHERE},        {"io", ACTION_IO, "NL", 3, NOT_IN_BODY},
    {"stop", ACTION_STOP, "", 3, ANYWHERE},      {"cancel", ACTION_CANCEL, "L", 5, ANYWHERE},
    {"threadsafe", ACTION_THREADSAFE, "L", 6, ANYWHERE},
    {"raise", ACTION_RAISE, "", 8, ANYWHERE},    {"interrupt", ACTION_INTERRUPT, "", 8, NOT_IN_BODY},
    {"block", ACTION_BLOCK, "N", 8, NOT_IN_BODY}, {"debug", ACTION_DEBUG, "N", 8, NOT_IN_BODY},
    {"handler", ACTION_HANDLER, "L", 8, NOT_IN_BODY}, {"run", ACTION_RUN, "", 8, NOT_IN_BODY},
    {"close", ACTION_CLOSE, "", 8, NOT_IN_BODY}, {"sighandler", ACTION_SIGHANDLER, "L", 8, NOT_IN_BODY},
    {"sigremove", ACTION_SIGREMOVE, "", 8, NOT_IN_BODY},
    {"signal", ACTION_SIGNAL, "N", 8, NOT_IN_BODY},
    {"future", ACTION_FUTURE, "L", 9, ANYWHERE}, {"task", ACTION_TASK, "L", 9, ANYWHERE},
    {"coro", ACTION_CORO, "L", 9, TOP_ONLY},     {"set", ACTION_SET, "RV", 9, ANYWHERE},
    {"fail", ACTION_FAIL, "R", 9, ANYWHERE},     {"run_until", ACTION_RUN_UNTIL, "R", 9, TOP_ONLY},
    {"main", ACTION_MAIN, "R", 9, TOP_ONLY},     {"sleep", ACTION_SLEEP, "N", 9, BODY_ONLY},
    {"await", ACTION_AWAIT, "R", 9, BODY_ONLY},  {"call", ACTION_CALL, "R", 9, BODY_ONLY},
    {"gather", ACTION_GATHER, "G", 9, BODY_ONLY},
    {"gather_exceptions", ACTION_GATHER_EXCEPTIONS, "G", 9, BODY_ONLY},
    {"wait_for", ACTION_WAIT_FOR, "RN", 9, BODY_ONLY},
    {"return", ACTION_RETURN, "V", 9, BODY_ONLY}, {"catch", ACTION_CATCH, "", 9, BODY_ONLY},
};

/* What a reference may name (bits: 1 << the defining line's kind), and
 * how its messages say it. */
#define K(kind) (1u << (kind))
static unsigned ref_kinds(action_kind k, const char **words)
{
    switch (k) {
    case ACTION_AWAIT:
        *words = "future or task";
        return K(ACTION_FUTURE) | K(ACTION_TASK);
    case ACTION_CALL:
    case ACTION_MAIN:
        *words = "coro";
        return K(ACTION_CORO);
    case ACTION_SET:
    case ACTION_FAIL:
        *words = "future";
        return K(ACTION_FUTURE);
    case ACTION_CANCEL:
        *words = "soon, later, at, future or task";
        return K(ACTION_SOON) | K(ACTION_LATER) | K(ACTION_AT) | K(ACTION_THREADSAFE) |
               K(ACTION_SIGHANDLER) | K(ACTION_FUTURE) | K(ACTION_TASK);
    default: /* gather, gather_exceptions, wait_for, run_until */
        *words = "future, task or coro";
        return K(ACTION_FUTURE) | K(ACTION_TASK) | K(ACTION_CORO);
    }
}

/* The words w[0 .. k] as written, one space apart: "later 1" in
 * "expected a label after 'later 1'".  They may be as long as the line, so
 * they go in a buffer of the parser's that grows (NULL: out of memory). */
static const char *prefix(parser_t *p, const word_t *w, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i <= k; i++)
        n += w[i].len + (i > 0);
    if (n >= p->capwords) {
        char *buf = realloc(p->words, n + 1);
        if (buf == NULL)
            return NULL;
        p->words = buf;
        p->capwords = n + 1;
    }
    n = 0;
    for (size_t i = 0; i <= k; i++) {
        if (i > 0)
            p->words[n++] = ' ';
        memcpy(p->words + n, w[i].s, w[i].len);
        n += w[i].len;
    }
    p->words[n] = '\0';
    return p->words;
}

/* @region line */
static int parse_line(parser_t *p, const char *line, size_t len)
{
    /* Only what is before a '#' counts.  Tabs and non-ASCII bytes there
     * are errors, even on a line that is otherwise blank. */
    const char *hash = memchr(line, '#', len);
    if (hash != NULL)
        len = (size_t)(hash - line);
    bool blank = true;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c == '\t')
            return error_at(p, (long)i + 1, blank ? "tab in indentation (use spaces)"
                                                  : "tab outside a comment (separate "
                                                    "tokens with spaces)");
        if (c >= 0x80)
            return error_at(p, (long)i + 1, "non-ASCII character outside a comment");
        if (c != ' ')
            blank = false;
    }
    if (blank)
        return 0;

    /* The words (pass 0 left only printable ASCII and spaces); four are
     * enough to see everything a line may hold, and one more. */
    word_t w[MAX_WORDS];
    size_t nw = 0, i = 0;
    long indent = 0;
    while (line[indent] == ' ')
        indent++;
    while (i < len && nw < MAX_WORDS) {
        if (line[i] == ' ') {
            i++;
            continue;
        }
        size_t start = i;
        while (i < len && line[i] != ' ')
            i++;
        w[nw++] = (word_t){line + start, i - start, (long)start + 1};
    }

    /* Where it goes, before what it is. */
    if (find_level(p, indent) < 0)
        return -1;
    action_t *parent = p->frames[p->nframes - 1].parent;
    bool nested = parent != NULL;
    bool in_body = nested && (parent->kind == ACTION_TASK || parent->kind == ACTION_CORO);

    size_t v = 0, nverbs = sizeof verbs / sizeof verbs[0];
    /* Chapter 08's and 09's verbs do not exist before their stage: an
     * unknown action there, as in the earlier stage's own parser. */
    while (v < nverbs &&
           !(strlen(verbs[v].name) == w[0].len && memcmp(verbs[v].name, w[0].s, w[0].len) == 0 &&
             (verbs[v].stage < 8 || p->stage >= verbs[v].stage)))
        v++;
    if (v == nverbs)
        return error_at(p, w[0].col,
                        "unknown action '%.*s' (expected soon, later, at, io, stop or cancel)",
                        (int)w[0].len, w[0].s);
    enum place place = verbs[v].place;
    if (in_body && (place == NOT_IN_BODY || place == TOP_ONLY))
        return error_at(p, w[0].col, "'%s' is not allowed in a task body", verbs[v].name);
    if (!in_body && place == BODY_ONLY)
        return error_at(p, w[0].col, "'%s' is allowed only in a task or coro body",
                        verbs[v].name);
    if (place == TOP_ONLY && nested)
        return error_at(p, w[0].col, "'%s' lines must be at top level (not indented)",
                        verbs[v].name);
    if (verbs[v].kind == ACTION_CANCEL && p->stage < 5)
        return error_at(p, w[0].col, "cancel needs stage 05");
    if (verbs[v].kind == ACTION_THREADSAFE && p->stage < 6)
        return error_at(p, w[0].col, "threadsafe needs stage 06");
    if (verbs[v].kind == ACTION_IO && nested)
        return error_at(p, w[0].col, "'io' lines must be at top level (not indented)");
    if (verbs[v].kind == ACTION_SIGNAL && nested)
        return error_at(p, w[0].col, "'signal' lines must be at top level (not indented)");
    if ((verbs[v].kind == ACTION_RAISE || verbs[v].kind == ACTION_INTERRUPT ||
         verbs[v].kind == ACTION_BLOCK) && !nested)
        return error_at(p, w[0].col, "'%s' must be indented under a callback", verbs[v].name);

    action_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return out_of_memory(p);
    a->kind = verbs[v].kind;
    a->line = p->line;
    a->body = in_body;
    *p->all_tail = a; /* owned from here on, even if the line is refused */
    p->all_tail = &a->all_next;

    /* The arguments, left to right.  gather takes as many labels as the
     * line holds, one at least, SCENARIO_GATHER_MAX at most. */
    char args[SCENARIO_GATHER_MAX + 1];
    if (strcmp(verbs[v].args, "G") == 0) {
        size_t n = nw > 1 ? nw - 1 : 1;
        if (n > SCENARIO_GATHER_MAX)
            n = SCENARIO_GATHER_MAX;
        memset(args, 'R', n);
        args[n] = '\0';
    } else {
        strcpy(args, verbs[v].args);
    }
    int nwords = (int)strlen(args);
    int nrefs = 0;
    for (int k = 0; k < nwords; k++)
        nrefs += args[k] == 'R';
    if (nrefs > 0) {
        a->refs = calloc((size_t)nrefs, sizeof *a->refs);
        if (a->refs == NULL)
            return out_of_memory(p);
    }
    for (int k = 0; k < nwords; k++) {
        bool want_number = args[k] == 'N';
        const char *what = want_number ? "number" : "label";
        const char *pre = prefix(p, w, (size_t)k);
        if (pre == NULL)
            return out_of_memory(p);
        if ((size_t)k + 1 >= nw) {
            const word_t *last = &w[nw - 1];
            return error_at(p, last->col + (long)last->len,
                            "expected a %s after '%s', got end of line", what, pre);
        }
        const word_t *t = &w[k + 1];
        if (want_number) {
            if (!is_number(t))
                return error_at(p, t->col, "expected a number after '%s', got '%.*s'", pre,
                                (int)t->len, t->s);
            if (to_double(p, t, &a->number) < 0)
                return -1;
            if (!(fabs(a->number) <= NUMBER_MAX))
                return error_at(p, t->col,
                                "number '%.*s' is out of range (at most 1e9 in absolute value)",
                                (int)t->len, t->s);
            if (a->kind == ACTION_BLOCK && a->number < 0)
                return error_at(p, t->col, "block needs a duration >= 0, got '%.*s'",
                                (int)t->len, t->s);
            if (a->kind == ACTION_DEBUG && a->number != 0 && a->number != 1)
                return error_at(p, t->col, "debug takes 0 or 1, got '%.*s'", (int)t->len, t->s);
            if (a->kind == ACTION_SLEEP && a->number < 0)
                return error_at(p, t->col, "sleep needs a duration >= 0, got '%.*s'",
                                (int)t->len, t->s);
            if (a->kind == ACTION_WAIT_FOR && a->number < 0)
                return error_at(p, t->col, "wait_for needs a timeout >= 0, got '%.*s'",
                                (int)t->len, t->s);
            continue;
        }
        if (!is_label(t))
            return error_at(p, t->col,
                            "expected a label after '%s', got '%.*s' (letters, digits and _, "
                            "not starting with a digit)",
                            pre, (int)t->len, t->s);
        if (t->len > SCENARIO_LABEL_MAX)
            return error_at(p, t->col, "label '%.*s' is longer than %d characters",
                            (int)t->len, t->s, SCENARIO_LABEL_MAX);
        if (args[k] == 'V') { /* a word passed along, not a label */
            memcpy(a->value, t->s, t->len);
            a->value[t->len] = '\0';
            continue;
        }
        if (args[k] == 'R') { /* named: checked once the whole file is read */
            action_ref_t *r = &a->refs[a->nrefs++];
            memcpy(r->label, t->s, t->len);
            r->label[t->len] = '\0';
            r->col = t->col;
            if (a->label[0] != '\0')
                continue; /* a->label: the first label it names */
        }
        memcpy(a->label, t->s, t->len);
        a->label[t->len] = '\0';
        a->label_col = t->col;
        if (args[k] == 'R')
            continue;
        if (a->kind == ACTION_HANDLER) { /* a word, not a label */
            static const char *kinds[] = {"default", "custom", "failing"};
            int h = 0;
            while (h < 3 && strcmp(a->label, kinds[h]) != 0)
                h++;
            if (h == 3)
                return error_at(p, t->col,
                                "unknown handler '%s' (expected default, custom or failing)",
                                a->label);
            a->handler = (handler_kind)h;
            continue;
        }
        if (a->kind != ACTION_CANCEL && define_label(p, a, t->col) < 0)
            return -1;
    }
    if (nw > (size_t)nwords + 1) {
        const word_t *t = &w[nwords + 1];
        if (verbs[v].args[0] == 'G')
            return error_at(p, t->col, "too many labels after '%s' (at most %d)",
                            verbs[v].name, SCENARIO_GATHER_MAX);
        const char *pre = prefix(p, w, (size_t)nwords);
        if (pre == NULL)
            return out_of_memory(p);
        return error_at(p, t->col, "unexpected '%.*s' after '%s'", (int)t->len, t->s, pre);
    }

    frame_t *level = &p->frames[p->nframes - 1];
    *level->tail = a;
    level->tail = &a->next;
    level->last = a;
    return 0;
}
/* @end line */

/* What a cancel names must be a call's label, defined anywhere in the
 * file: known only once the whole file is read.  The cancel then takes
 * that line's rank among the calls (action_t's `call`).  Stage 09's lines
 * that name labels (await X, gather X Y, ...) are checked the same way,
 * and each reference then points at the line that defines its label. */
static int check_references(parser_t *p)
{
    for (action_t *a = p->s->all; a != NULL; a = a->all_next) {
        p->line = a->line;
        const char *words;
        unsigned kinds = ref_kinds(a->kind, &words);
        if (a->kind == ACTION_CANCEL) {
            action_t *target = find_label(p, a->label);
            if (target == NULL)
                return error_at(p, a->label_col,
                                "cancel of unknown label '%s' (no soon, later or at line "
                                "defines it)", a->label);
            if (target->kind == ACTION_IO)
                return error_at(p, a->label_col,
                                "cannot cancel io label '%s' (only soon, later and at labels)",
                                a->label);
            if (!(kinds & K(target->kind)))
                return error_at(p, a->label_col, "cancel of %s label '%s' (it needs a %s label)",
                                kind_name(target->kind), a->label, words);
            a->call = target->call;
        }
        for (int i = 0; i < a->nrefs; i++) {
            action_ref_t *r = &a->refs[i];
            const action_t *def = find_label(p, r->label);
            if (def == NULL)
                return error_at(p, r->col, "%s of unknown label '%s' (no %s line defines it)",
                                kind_name(a->kind), r->label, words);
            if (!(kinds & K(def->kind)))
                return error_at(p, r->col, "%s of %s label '%s' (it needs a %s label)",
                                kind_name(a->kind), kind_name(def->kind), r->label, words);
            r->def = def;
        }
    }
    return 0;
}

int scenario_parse(const char *text, size_t len, const char *filename, int stage,
                   scenario_t *out, char **err)
{
    memset(out, 0, sizeof *out);
    *err = NULL;
    parser_t p = {.filename = filename, .stage = stage, .s = out, .err = err,
                  .all_tail = &out->all};
    int rc = check_bytes(&p, text, len);
    if (rc == 0)
        rc = push_frame(&p, 0, NULL, &out->actions);
    size_t pos = 0;
    p.line = 0;
    while (rc == 0 && pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        p.line++;
        rc = parse_line(&p, text + pos, end - pos);
        pos = end + 1;
    }
    if (rc == 0)
        rc = check_references(&p);
    free(p.frames);
    free(p.labels);
    free(p.words);
    if (rc < 0) {
        scenario_free(out);
        if (*err == NULL) {
            size_t n = strlen(filename) + sizeof ": out of memory";
            *err = malloc(n);
            if (*err != NULL)
                snprintf(*err, n, "%s: out of memory", filename);
        }
    }
    return rc;
}

char *scenario_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *text = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len == cap) {
            cap = cap ? 2 * cap : 4096;
            char *t = realloc(text, cap);
            if (t == NULL) {
                free(text);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            text = t;
        }
        size_t n = fread(text + *len, 1, cap - *len, f);
        *len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno;
        free(text);
        fclose(f);
        errno = e ? e : EIO;
        return NULL;
    }
    fclose(f);
    return text;
}

void scenario_free(scenario_t *s)
{
    action_t *a = s->all;
    while (a != NULL) {
        action_t *next = a->all_next;
        free(a->refs);
        free(a);
        a = next;
    }
    free(s->io);
    memset(s, 0, sizeof *s);
}
