#!/usr/bin/python3
"""Run a scenario on CPython's real asyncio event loop, on a virtual clock.

    cpython_trace.py [--stage N] SCENARIO      (SCENARIO may be '-' for stdin)
    cpython_trace.py [--stage N] --out DIR SCENARIO...   (many, in one process)

The scenario language and the trace format are specified in the book's
appendix C (chapters/a3-scenarios.md).  This program is the reference the C
`trace` programs are compared with, byte for byte.

What it does NOT do is as important as what it does: it never touches
BaseEventLoop._run_once, call_at, call_later, the heap or the ready deque.
The only two things replaced are the clock (`time()`) and the selector (an
object whose `select(timeout)` is the only place virtual time advances).
Every scheduling decision -- which timers are due, in which order equal
deadlines leave the heap, what the snapshot of the ready queue holds -- is
taken by CPython's own code.

Exit status: 0 after printing the trace; 2 for a malformed scenario (one line
FILE:LINE:COL: MESSAGE on stderr, nothing run, nothing on stdout); 3 for an
internal error of this harness.
"""

import asyncio
import asyncio.format_helpers
import collections.abc
import gc
import logging
import re
import selectors
import signal
import socket
import sys
import traceback
import warnings
import weakref

MAX_ABS_NUMBER = 1e9
MAX_LABEL_LEN = 32
MAX_IO_LABELS = 100
TICK_LIMIT = 100000

NUMBER_RE = re.compile(rb"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
LABEL_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# Control characters other than tab and newline (CR is reported on its own).
CONTROL_RE = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")

ACTIONS = (b"soon", b"later", b"at", b"io", b"stop", b"cancel", b"threadsafe")
LABELLED = (b"soon", b"later", b"at", b"io", b"threadsafe")   # lines that may have children
# Stage 08 on: the loop's life (chapter 08).  raise / interrupt / block run
# inside a callback; signal arrives at a virtual time (top level).
ACTIONS_08 = (b"raise", b"interrupt", b"block", b"debug", b"handler", b"run", b"close",
              b"sighandler", b"sigremove", b"signal")
HANDLERS = ("default", "custom", "failing")
# Stage 09 on: futures and tasks (chapter 09).  A `task` or `coro` line's
# indented lines are its BODY (the lines of an `async def`).
ACTIONS_09 = (b"future", b"task", b"coro", b"set", b"fail", b"run_until", b"main",
              b"sleep", b"await", b"call", b"gather", b"gather_exceptions", b"wait_for",
              b"return", b"catch")
BODY_ONLY = ("sleep", "await", "call", "gather", "gather_exceptions", "wait_for", "return", "catch")
NOT_IN_BODY = ("io", "signal", "block", "interrupt", "debug", "handler", "run", "close",
               "sighandler", "sigremove", "coro", "main", "run_until")
TOP_ONLY_09 = ("coro", "main", "run_until")
CALLBACKS = ("soon", "later", "at", "io", "threadsafe", "sighandler")   # children: a callback's
MAX_GATHER = 8                    # labels after gather, at most
# What a reference may name: the kinds (the verbs of the lines that define
# labels) each verb accepts, and how its messages say it.
REFERS = {
    "await": (("future", "task"), "future or task"),
    "call": (("coro",), "coro"),
    "main": (("coro",), "coro"),
    "set": (("future",), "future"),
    "fail": (("future",), "future"),
    "gather": (("future", "task", "coro"), "future, task or coro"),
    "gather_exceptions": (("future", "task", "coro"), "future, task or coro"),
    "wait_for": (("future", "task", "coro"), "future, task or coro"),
    "run_until": (("future", "task", "coro"), "future, task or coro"),
    "cancel": (("soon", "later", "at", "threadsafe", "sighandler", "future", "task"),
               "soon, later, at, future or task"),
}


# --------------------------------------------------------------------- parsing

class ScenarioError(Exception):
    def __init__(self, line, col, message):
        super().__init__(message)
        self.line, self.col, self.message = line, col, message


class Node:
    """One action line.  `children` run each time this line's callback runs."""
    __slots__ = ("action", "number", "label", "line", "col", "label_col",
                 "indent", "children", "first_io", "refs", "value", "body")

    def __init__(self, action, line, col, indent):
        self.action = action          # str: 'soon', 'later', ...
        self.number = None            # float for later / at / io
        self.label = None             # str
        self.line, self.col, self.indent = line, col, indent
        self.label_col = None
        self.children = []
        self.first_io = False         # for io: is this the label's first io line
        self.refs = []                # stage 09: the labels it names, [(label, col)]
        self.value = None             # return V, set F V: the word V
        self.body = False             # is it a line of a task or coro body


class Scenario:
    def __init__(self):
        self.top = []                 # top-level Nodes in file order
        self.io_labels = []           # io labels in order of first appearance
        self.io_node = {}             # io label -> its first io Node (holds the children)


def q(token):
    """A token quoted for a message (tokens are ASCII by the time we quote them)."""
    return "'" + token.decode("ascii") + "'"


def check_bytes(data):
    """Pass 0: the whole file, byte by byte.  Returns (offset, message) or None."""
    found = []
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        found.append((e.start, "invalid UTF-8 (byte 0x%02X)" % data[e.start]))
    m = CONTROL_RE.search(data)
    if m:
        b = data[m.start()]
        if b == 0x0D:
            msg = "carriage return (line endings must be \\n, not \\r\\n)"
        else:
            msg = "control character 0x%02X is not allowed" % b
        found.append((m.start(), msg))
    return min(found) if found else None


def parse(data, stage=99):
    """Parse a scenario (bytes).  Raises ScenarioError for the first error."""
    bad = check_bytes(data)
    if bad:
        offset, msg = bad
        line = data.count(b"\n", 0, offset) + 1
        col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        raise ScenarioError(line, col, msg)

    sc = Scenario()
    defined = {}                      # label -> (kind 'timer'|'io'|'future'|'task'|'coro', line, verb)
    refers = []                       # cancel Nodes (and stage 09's references), checked
                                      #   after the whole file
    stack = []                        # open lines, outermost first: [Node]
    parents = CALLBACKS + (("task", "coro") if stage >= 9 else ())
    lines = data.split(b"\n")
    for lineno, raw in enumerate(lines, 1):
        content = raw.split(b"#", 1)[0]
        # tabs and non-ASCII bytes outside comments, whichever comes first
        for i, b in enumerate(content):
            if b == 0x09:
                if content[:i].strip(b" ") == b"":
                    raise ScenarioError(lineno, i + 1, "tab in indentation (use spaces)")
                raise ScenarioError(lineno, i + 1, "tab outside a comment (separate tokens with spaces)")
            if b >= 0x80:
                raise ScenarioError(lineno, i + 1, "non-ASCII character outside a comment")
        if content.strip(b" ") == b"":
            continue
        indent = len(content) - len(content.lstrip(b" "))
        tokens = []                   # (bytes, 1-based column)
        for m in re.finditer(rb"[^ ]+", content):
            tokens.append((m.group(), m.start() + 1))
        col0 = indent + 1

        # --- structure: who is the parent of this line?
        if stack and indent > stack[-1].indent:
            parent = stack[-1]
            if parent.action not in parents:
                raise ScenarioError(lineno, col0, "'%s' cannot have children" % parent.action)
            if parent.action == "io" and not parent.first_io:
                first = sc.io_node[parent.label]
                raise ScenarioError(lineno, col0,
                                    "children of io label '%s' must be under its first io line (line %d)"
                                    % (parent.label, first.line))
        elif not stack and indent > 0:
            raise ScenarioError(lineno, col0, "first action line is indented (top-level lines start in column 1)")
        else:
            while stack and stack[-1].indent > indent:
                stack.pop()
            if stack and stack[-1].indent != indent:
                raise ScenarioError(lineno, col0,
                                    "indentation of %d spaces matches no outer level" % indent)
            if stack:
                stack.pop()           # a sibling replaces the previous line
        parent = stack[-1] if stack else None
        in_body = parent is not None and parent.action in ("task", "coro")

        # --- the action
        word, wcol = tokens[0]
        if word not in ACTIONS and not (stage >= 8 and word in ACTIONS_08) \
                and not (stage >= 9 and word in ACTIONS_09):
            raise ScenarioError(lineno, wcol,
                                "unknown action %s (expected soon, later, at, io, stop or cancel)" % q(word))
        verb = word.decode()
        if in_body and verb in NOT_IN_BODY:
            raise ScenarioError(lineno, wcol, "'%s' is not allowed in a task body" % verb)
        if not in_body and verb in BODY_ONLY:
            raise ScenarioError(lineno, wcol, "'%s' is allowed only in a task or coro body" % verb)
        if verb in TOP_ONLY_09 and parent is not None:
            raise ScenarioError(lineno, wcol, "'%s' lines must be at top level (not indented)" % verb)
        if word == b"cancel" and stage < 5:
            raise ScenarioError(lineno, wcol, "cancel needs stage 05")
        if word == b"threadsafe" and stage < 6:
            raise ScenarioError(lineno, wcol, "threadsafe needs stage 06")
        if word == b"io" and parent is not None:
            raise ScenarioError(lineno, wcol, "'io' lines must be at top level (not indented)")
        if word == b"signal" and parent is not None:
            raise ScenarioError(lineno, wcol, "'signal' lines must be at top level (not indented)")
        if word in (b"raise", b"interrupt", b"block") and parent is None:
            raise ScenarioError(lineno, wcol, "'%s' must be indented under a callback" % word.decode())
        node = Node(verb, lineno, wcol, indent)
        node.body = in_body

        # --- the arguments, left to right.  "label": a label this line
        # defines (or, for cancel and handler, names); "ref": one it names;
        # "value": a word it passes along (return V, set F V).
        if word in (b"stop", b"raise", b"interrupt", b"run", b"close", b"sigremove", b"catch"):
            wants = []
        elif word in (b"later", b"at", b"io"):
            wants = ["number", "label"]
        elif word in (b"block", b"debug", b"signal", b"sleep"):
            wants = ["number"]
        elif word == b"set":
            wants = ["ref", "value"]
        elif word == b"wait_for":
            wants = ["ref", "number"]
        elif word in (b"fail", b"await", b"call", b"main", b"run_until"):
            wants = ["ref"]
        elif word in (b"gather", b"gather_exceptions"):
            # one label at least, and as many more as the line holds (up to MAX_GATHER)
            wants = ["ref"] * max(1, min(len(tokens) - 1, MAX_GATHER))
        elif word == b"return":
            wants = ["value"]
        else:
            wants = ["label"]
        for k, kind in enumerate(wants):
            prefix = b" ".join(t for t, _ in tokens[:k + 1])
            if k + 1 >= len(tokens):
                last, lcol = tokens[-1]
                raise ScenarioError(lineno, lcol + len(last),
                                    "expected a %s after %s, got end of line"
                                    % ("number" if kind == "number" else "label", q(prefix)))
            tok, tcol = tokens[k + 1]
            if kind == "number":
                if not NUMBER_RE.fullmatch(tok):
                    raise ScenarioError(lineno, tcol,
                                        "expected a number after %s, got %s" % (q(prefix), q(tok)))
                x = float(tok)
                if not abs(x) <= MAX_ABS_NUMBER:
                    raise ScenarioError(lineno, tcol,
                                        "number %s is out of range (at most 1e9 in absolute value)" % q(tok))
                if word == b"block" and x < 0:
                    raise ScenarioError(lineno, tcol, "block needs a duration >= 0, got %s" % q(tok))
                if word == b"debug" and x != 0 and x != 1:
                    raise ScenarioError(lineno, tcol, "debug takes 0 or 1, got %s" % q(tok))
                if word == b"sleep" and x < 0:
                    raise ScenarioError(lineno, tcol, "sleep needs a duration >= 0, got %s" % q(tok))
                if word == b"wait_for" and x < 0:
                    raise ScenarioError(lineno, tcol, "wait_for needs a timeout >= 0, got %s" % q(tok))
                node.number = x
            else:
                if not LABEL_RE.fullmatch(tok):
                    raise ScenarioError(lineno, tcol,
                                        "expected a label after %s, got %s "
                                        "(letters, digits and _, not starting with a digit)"
                                        % (q(prefix), q(tok)))
                if len(tok) > MAX_LABEL_LEN:
                    raise ScenarioError(lineno, tcol,
                                        "label %s is longer than %d characters" % (q(tok), MAX_LABEL_LEN))
                label = tok.decode("ascii")
                if kind == "value":
                    node.value = label
                    continue
                if kind == "ref":
                    node.refs.append((label, tcol))
                    if node.label is None:
                        node.label, node.label_col = label, tcol
                    continue
                node.label, node.label_col = label, tcol
                if word == b"handler":
                    if label not in HANDLERS:
                        raise ScenarioError(lineno, tcol, "unknown handler %s (expected default, "
                                            "custom or failing)" % q(tok))
                elif word == b"cancel":
                    node.refs.append((label, tcol))
                elif word == b"io" and defined.get(label, ("io",))[0] == "io":
                    if label not in defined:
                        if len(sc.io_labels) >= MAX_IO_LABELS:
                            raise ScenarioError(lineno, tcol,
                                                "too many io labels (at most %d)" % MAX_IO_LABELS)
                        defined[label] = ("io", lineno, "io")
                        sc.io_labels.append(label)
                        sc.io_node[label] = node
                        node.first_io = True
                elif label in defined:
                    raise ScenarioError(lineno, tcol, "label %s is already defined on line %d"
                                        % (q(tok), defined[label][1]))
                else:
                    kind_of = verb if verb in ("future", "task", "coro") else "timer"
                    defined[label] = (kind_of, lineno, verb)
        if len(tokens) > len(wants) + 1:
            tok, tcol = tokens[len(wants) + 1]
            prefix = b" ".join(t for t, _ in tokens[:len(wants) + 1])
            if word in (b"gather", b"gather_exceptions"):
                raise ScenarioError(lineno, tcol, "too many labels after %s (at most %d)"
                                    % (q(word), MAX_GATHER))
            raise ScenarioError(lineno, tcol, "unexpected %s after %s" % (q(tok), q(prefix)))

        if parent is None:
            sc.top.append(node)
        else:
            parent.children.append(node)
        if node.refs:
            refers.append(node)
        stack.append(node)

    # Pass 2: what a cancel (or, stage 09, an await, a gather, ...) refers
    # to is known only once the whole file is read.
    for node in refers:
        if node.action == "cancel":
            kind = defined.get(node.label, (None,))[0]
            if kind is None:
                raise ScenarioError(node.line, node.label_col,
                                    "cancel of unknown label '%s' (no soon, later or at line defines it)"
                                    % node.label)
            if kind == "io":
                raise ScenarioError(node.line, node.label_col,
                                    "cannot cancel io label '%s' (only soon, later and at labels)" % node.label)
        kinds, words = REFERS[node.action]
        for label, col in node.refs:
            if label not in defined:
                raise ScenarioError(node.line, col, "%s of unknown label '%s' (no %s line defines it)"
                                    % (node.action, label, words))
            if defined[label][2] not in kinds:
                raise ScenarioError(node.line, col, "%s of %s label '%s' (it needs a %s label)"
                                    % (node.action, defined[label][2], label, words))
    return sc


# ------------------------------------------------------------ virtual loop

class VirtualLoop(asyncio.SelectorEventLoop):
    """CPython's own SelectorEventLoop; only the clock is virtual."""

    def __init__(self, selector):
        self._vnow = 0.0
        super().__init__(selector)
        self._clock_resolution = 1e-09   # CLOCK_MONOTONIC on Linux; fixed so any machine agrees

    def time(self):
        return self._vnow

    # Stage 09: what Future.__del__ and Task.__del__ report depends on when
    # the last reference goes (refcounts, the cycle collector), which the C
    # loop cannot mirror; the harness keeps every future and task alive
    # until the run ends instead, and these messages never reach the
    # handler (default, custom or failing): "Task was destroyed but it is
    # pending!" and "CLASS exception was never retrieved" for every class
    # (Future, Task, and gather's _GatheringFuture, which nobody keeps).
    # The check suites test them.
    # In debug mode a future or task records where it was made (the C
    # Future asks traceback.extract_stack, which the patch of
    # format_helpers below does not reach) and its repr then ends with
    # "created at FILE:LINE"; C has no Python stack.  Futures and tasks are
    # made with debug mode off for that instant (_task_factory too).
    def create_future(self):
        debug, self._debug = self._debug, False
        try:
            return super().create_future()
        finally:
            self._debug = debug

    def call_exception_handler(self, context):
        message = context.get("message") or ""
        if message == "Task was destroyed but it is pending!" or \
                message.endswith(" exception was never retrieved"):
            return
        super().call_exception_handler(context)


class VirtualSelector(selectors.BaseSelector):
    """Delegates registration to a real SelectSelector; select(timeout) is the
    spec's virtual wait.  This is the only place where time advances."""

    def __init__(self, harness):
        self._real = selectors.SelectSelector()
        self._h = harness

    def register(self, fileobj, events, data=None):
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj):
        return self._real.unregister(fileobj)

    def modify(self, fileobj, events, data=None):
        return self._real.modify(fileobj, events, data)

    def get_key(self, fileobj):
        return self._real.get_key(fileobj)

    def get_map(self):
        return self._real.get_map()

    def close(self):
        self._real.close()

    def select(self, timeout=None):
        return self._h.wait(timeout, self._real)


# ------------------------------------------------- stage 08: the loop's life

class Callback:
    """A scenario line's callback.  CPython names a callback in its messages
    by its __qualname__ and its arguments ("Exception in callback a()"); an
    object with the label as its __qualname__ and no arguments is named
    "LABEL()", as the C trace's namer names it.  (A plain bound method would
    be "Harness._timer_cb(<Node>) at cpython_trace.py:123".)"""

    def __init__(self, fn, node, label):
        self.fn, self.node = fn, node
        self.__qualname__ = label

    def __call__(self):
        self.fn(self.node)


class TraceLog(logging.Handler):
    """asyncio's logger (the default exception handler, debug mode's slow
    callbacks) writes into the trace.  Where Python prints a traceback, the
    trace has its last line, "RuntimeError: a": C has no traceback, and
    the C default handler prints that line."""

    out = None

    def emit(self, record):
        self.out.write(self.format(record) + "\n")


class TraceFormatter(logging.Formatter):
    def formatException(self, ei):
        return "".join(traceback.format_exception_only(ei[0], ei[1])).rstrip("\n")


TRACE_LOG = TraceLog(logging.WARNING)
TRACE_LOG.setFormatter(TraceFormatter("%(message)s"))
_asyncio_logger = logging.getLogger("asyncio")
_asyncio_logger.addHandler(TRACE_LOG)
_asyncio_logger.propagate = False
# Debug mode records where each handle was created (a Python stack, which
# the C loop has no equivalent of) and prints it in its messages; record
# nothing.  Everything else debug mode does is kept.
asyncio.format_helpers.extract_stack = lambda f=None, limit=None: traceback.StackSummary()


# ------------------------------------------------ stage 09: futures and tasks

class Coro(collections.abc.Coroutine):
    """The coroutine object of a `task` or `coro` body: what C() returns.

    asyncio names a coroutine in reprs by its __qualname__ and, when it has
    a code object (cr_code), adds where it runs ("main() running at
    file.py:12"); C has no code objects.  This wrapper has the label as its
    __qualname__ and no cr_code, so asyncio prints it as "LABEL()", as
    the C task_repr prints a coro_t.  The real `async def` coroutine that
    interprets the body is made at the first send(), so a wrapper that never
    runs (a refused create_task) leaves no "never awaited" warning."""

    def __init__(self, label, make):
        self.__qualname__ = label
        self._make = make
        self._co = None

    def _coro(self):
        if self._co is None:
            self._co = self._make()
        return self._co

    def send(self, value):
        return self._coro().send(value)

    def throw(self, typ, val=None, tb=None):
        return self._coro().throw(typ, val, tb)

    def close(self):
        if self._co is not None:
            self._co.close()

    def __await__(self):
        return self

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)


# asyncio.all_tasks() is a set, which CPython iterates in memory-address
# order: Runner.close cancels the remaining tasks in that order, and so the
# trace would depend on malloc.  The harness numbers every task its factory
# makes and replaces all_tasks by one that returns the same tasks ordered by
# creation, as the C loop_all_tasks() returns them.  (Runner.close's
# _cancel_all_tasks looks it up as tasks.all_tasks at each call.)
_TASK_RANK = weakref.WeakKeyDictionary()
_original_all_tasks = asyncio.tasks.all_tasks


def _all_tasks_by_creation(loop=None):
    return sorted(_original_all_tasks(loop), key=lambda t: _TASK_RANK.get(t, -1))


asyncio.tasks.all_tasks = _all_tasks_by_creation
asyncio.all_tasks = _all_tasks_by_creation

# A `main` on a closed loop: Runner.close() makes the coroutine
# shutdown_asyncgens() and cannot run it.  Its warning is no part of a trace.
warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)


def format_error(e):
    """An error as the trace prints it: "TYPE: MESSAGE", or "TYPE" when
    the message is empty; a message ending in a repr ("Task cannot await
    on itself: <Task ...>") up to the ": <"."""
    msg = str(e)
    cut = msg.find(": <")
    if cut >= 0:
        msg = msg[:cut]
    return type(e).__name__ + (": " + msg if msg else "")


def format_value(v):
    """A value: None, a label word, or a gather list of values and errors."""
    if v is None:
        return "None"
    if isinstance(v, list):
        return "[" + ", ".join(format_error(x) if isinstance(x, BaseException) else format_value(x)
                               for x in v) + "]"
    return str(v)


def what(node):
    """A line as its trace lines name it: the verb and its label arguments,
    no numbers and no values ("gather a b", "wait_for t", "sleep", "set f")."""
    return " ".join([node.action] + [label for label, _ in node.refs])


class Harness:
    def __init__(self, scenario, out, stage=99):
        self.sc = scenario
        self.out = out
        self.ticks = 0
        self.hit_limit = False
        self.pending = []              # [(when, label)] io bytes, sorted by time once set up
        self.next = 0                  # pending[next:]: the bytes not yet delivered
        self.socks = {}                # io label -> (read socket, write socket)
        self.order = {}                # read fd -> rank of its label's first appearance
        self.handles = {}              # label -> most recent handle scheduled for it
        self.loop = VirtualLoop(VirtualSelector(self))
        self.loop.set_debug(False)     # PYTHONASYNCIODEBUG must not change anything
        self.failure = None
        self.stage = stage
        self.over = False              # the trace has ended: print nothing more
        self.keep = []                 # stage 09: every future and task, until the end
        self.coros = {node.label: node for node in scenario.top if node.action == "coro"}
        self.task_count = 0
        if stage >= 9:
            self.loop.set_task_factory(self._task_factory)
        if stage >= 8:                 # a failing callback is part of the trace
            TRACE_LOG.out = out
            self.loop.set_exception_handler(None)
        else:                          # no scenario can fail: a failure is a bug here
            self.loop.set_exception_handler(self._on_exception)

    # -- the virtual wait (spec: "Virtual clock")
    def wait(self, timeout, real):
        loop = self.loop
        self.ticks += 1
        now = loop._vnow
        earliest = self.pending[self.next][0] if self.next < len(self.pending) else None
        if timeout is None:
            if earliest is None:      # nothing can ever happen again: the scenario is over
                loop.stop()
                return []
            if earliest > now:
                now = earliest
        else:
            deadline = now + timeout
            if earliest is not None and earliest <= deadline:
                if earliest > now:
                    now = earliest
            else:
                now = deadline
        loop._vnow = now
        # One byte per label with bytes due, however many: its callback reads
        # all it finds, so the trace is the same, and one byte always fits in
        # the socket's buffer.  The bytes are sorted, so this costs no more
        # than the bytes delivered.
        due = {}
        while self.next < len(self.pending) and self.pending[self.next][0] <= now:
            label = self.pending[self.next][1]
            if label is None:
                if signal.getsignal(signal.SIGUSR1) != signal.SIG_DFL:
                    signal.raise_signal(signal.SIGUSR1)
            else:
                due[label] = True
            self.next += 1
        for label in due:
            if label is None:         # SIGUSR1, if a handler waits for it
                continue
            self.socks[label][1].send(b"x")
        events = real.select(0)
        # io fds by first appearance of their label; anything else (the loop's
        # self-pipe, readable after call_soon_threadsafe) first, as it was
        # created first (the C loop makes its self-pipe in loop_new, too).
        events.sort(key=lambda ev: self.order.get(ev[0].fd, -1))
        if self.ticks == TICK_LIMIT:
            self.hit_limit = True
            loop.stop()
        return events

    # -- callbacks
    def _on_exception(self, loop, context):
        if self.failure is None:
            self.failure = context
        loop.stop()

    def _trace(self, label):
        if self.over:
            return
        self.out.write("%.6f tick %d %s\n" % (self.loop.time(), self.ticks, label))

    def _refused(self, node, exc):
        if self.over:
            return
        if node.refs:                 # stage 09's verbs: every label they name
            what = globals()["what"](node)
        else:
            what = node.action + (" " + node.label if node.label and node.action != "handler" else "")
        self.out.write("%.6f tick %d %s refused: %s\n" % (self.loop.time(), self.ticks, what, exc))

    def _handler(self, loop, context, failing=False):
        line = "handler: %s" % context.get("message")
        exc = context.get("exception")
        if exc is not None:
            line += " (%s: %s)" % (type(exc).__name__, exc)
        self._trace(line)
        if failing:
            raise RuntimeError("handler failed")

    def _failing_handler(self, loop, context):
        self._handler(loop, context, True)

    def _cb(self, node):
        if self.stage < 8:
            return self._timer_cb, node
        return (Callback(self._timer_cb, node, node.label),)

    def _timer_cb(self, node):
        self._trace(node.label)
        for child in node.children:
            self.execute(child, node.label)

    def _io_cb(self, label):
        rsock = self.socks[label][0]
        while True:
            try:
                if not rsock.recv(4096):
                    break
            except BlockingIOError:
                break
        self._trace(label)
        for child in self.sc.io_node[label].children:
            self.execute(child, label)

    def execute(self, node, inside=None):
        try:
            self._execute(node, inside)
        except RuntimeError as e:     # a refusal of the loop's (chapter 08)
            if self.stage < 8 or node.action == "raise":   # a scenario's own raise
                raise
            self._refused(node, e)
        except asyncio.InvalidStateError as e:   # set / fail on a done future
            self._refused(node, e)

    # -- stage 09: futures, tasks and the bodies they run
    def _task_factory(self, loop, coro, context=None):
        """Every task is named after the coroutine it runs (a body's label:
        `task T`, or a coro C that gather, wait_for, run_until or main wraps
        in a task), numbered for all_tasks, and kept until the run ends."""
        debug, loop._debug = loop._debug, False    # see VirtualLoop.create_future
        try:
            task = asyncio.Task(coro, loop=loop, name=getattr(coro, "__qualname__", None),
                                context=context)
        finally:
            loop._debug = debug
        _TASK_RANK[task] = self.task_count
        self.task_count += 1
        self.keep.append(task)
        return task

    def _done_cb(self, label):
        def done(fut):
            if fut.cancelled():
                self._trace("%s: cancelled" % label)
            elif fut.exception() is not None:
                self._trace("%s: error %s" % (label, format_error(fut.exception())))
            else:
                self._trace("%s: result %s" % (label, format_value(fut.result())))
        done.__qualname__ = label + "_done"
        return done

    def new_coro(self, label, nodes):
        return Coro(label, lambda: self.body(label, nodes))

    def resolve(self, node):
        """The awaitables a line names: the most recent future or task of each
        label, a new coroutine object for a coro label; None (after printing
        "VERB X refused: no X yet") if a future or task is not there yet."""
        found = []
        for label, _ in node.refs:
            if label in self.coros:
                found.append(None)
            elif label in self.handles:
                found.append(self.handles[label])
            else:
                self._refused(node, "no %s yet" % label)
                return None
        return [self.new_coro(label, self.coros[label].children) if f is None else f
                for (label, _), f in zip(node.refs, found)]

    def awaitable(self, node):
        if node.action == "sleep":
            return asyncio.sleep(node.number)
        args = self.resolve(node)
        if args is None:
            return None
        if node.action in ("await", "call"):
            return args[0]
        if node.action in ("gather", "gather_exceptions"):
            # Each coro argument is wrapped in its task first, in argument
            # order, and gather gets futures only: what a C program does,
            # whose loop_gather() takes futures.  (gather(c1(), f) would
            # wrap c1() between adding its done callbacks, and a done
            # future's callback could then be queued before the task's
            # first step.)
            args = [asyncio.ensure_future(a) for a in args]
            return asyncio.gather(*args, return_exceptions=node.action == "gather_exceptions")
        return asyncio.wait_for(args[0], node.number)

    async def body(self, label, nodes):
        """A task's or coro's body: the `async def` the scenario describes."""
        self._trace("%s start" % label)
        catching = False
        for node in nodes:
            a = node.action
            if a == "catch":
                catching = True
            elif a == "return":
                return node.value
            elif a == "raise":
                raise RuntimeError(label)
            elif a in BODY_ONLY:
                aw = self.awaitable(node)
                if aw is None:
                    continue
                try:
                    value = await aw
                except (Exception, asyncio.CancelledError) as e:
                    self._trace("%s %s -> error %s" % (label, what(node), format_error(e)))
                    if not catching:
                        raise
                    continue
                self._trace("%s %s -> %s" % (label, what(node), format_value(value)))
            else:
                self.execute(node, label)
        return None

    def run_until(self, node):
        args = self.resolve(node)
        if args is None:
            return
        try:
            value = self.loop.run_until_complete(args[0])
        except (Exception, asyncio.CancelledError, KeyboardInterrupt) as e:
            self._trace("run_until %s -> error %s" % (node.label, format_error(e)))
            return
        self._trace("run_until %s -> %s" % (node.label, format_value(value)))

    def run_main(self, node):
        """asyncio.run(C()) on the harness's loop: `with asyncio.Runner(
        loop_factory=...) as runner: return runner.run(C())`, as the C
        loop_run_main_on() does.  An error of the runner's close() (a stop
        that ends one of its runs early, a KeyboardInterrupt) replaces
        run()'s outcome, as it does when it leaves the `with`.  The outcome
        is printed after close(), as the C function returns only then."""
        runner = asyncio.Runner(loop_factory=lambda: self.loop)
        try:
            value = runner.run(self.new_coro(node.label, self.coros[node.label].children))
            line = "main %s -> %s" % (node.label, format_value(value))
        except (Exception, asyncio.CancelledError, KeyboardInterrupt) as e:
            line = "main %s -> error %s" % (node.label, format_error(e))
        try:
            runner.close()
        except (Exception, asyncio.CancelledError, KeyboardInterrupt) as e:
            line = "main %s -> error %s" % (node.label, format_error(e))
        if not self.loop.is_closed():
            self.loop.close()
        self._trace(line)

    def _execute(self, node, inside):
        loop = self.loop
        a = node.action
        if a == "soon":
            self.handles[node.label] = loop.call_soon(*self._cb(node))
        elif a == "threadsafe":
            # From the loop's own thread, so the order is deterministic: it is
            # call_soon plus _write_to_self(), whose byte makes the self-pipe
            # readable at the next poll (its reader, _read_from_self, prints nothing).
            self.handles[node.label] = loop.call_soon_threadsafe(*self._cb(node))
        elif a == "later":
            self.handles[node.label] = loop.call_later(node.number, *self._cb(node))
        elif a == "at":
            self.handles[node.label] = loop.call_at(node.number, *self._cb(node))
        elif a == "raise":
            raise RuntimeError(inside)
        elif a == "interrupt":
            raise KeyboardInterrupt(inside)
        elif a == "block":            # the callback runs for a while: the clock moves
            loop._vnow = loop._vnow + node.number
        elif a == "debug":
            loop.set_debug(bool(node.number))
        elif a == "handler":
            loop.set_exception_handler({"default": None, "custom": self._handler,
                                        "failing": self._failing_handler}[node.label])
        elif a == "run":
            if inside is None:
                self.run_loop(node)
            else:
                loop.run_forever()    # refused: This event loop is already running
        elif a == "close":
            loop.close()
        elif a == "sighandler":
            loop.add_signal_handler(signal.SIGUSR1, *self._cb(node))
            self.handles[node.label] = loop._signal_handlers[signal.SIGUSR1]
        elif a == "sigremove":
            loop.remove_signal_handler(signal.SIGUSR1)
        elif a == "signal":
            self.pending.append((node.number, None))
        elif a == "stop":
            loop.stop()
        elif a == "cancel":
            h = self.handles.get(node.label)
            if h is not None:
                h.cancel()
        elif a == "future":
            fut = loop.create_future()
            fut.add_done_callback(self._done_cb(node.label))
            self.handles[node.label] = fut
            self.keep.append(fut)
        elif a == "task":
            task = loop.create_task(self.new_coro(node.label, node.children))
            task.add_done_callback(self._done_cb(node.label))
            self.handles[node.label] = task
        elif a == "coro":
            pass                      # a definition: it runs nothing
        elif a in ("set", "fail"):
            args = self.resolve(node)
            if args is not None:
                if a == "set":
                    args[0].set_result(node.value)
                else:
                    args[0].set_exception(RuntimeError(node.label))
        elif a == "run_until":
            self.run_until(node)
        elif a == "main":
            self.run_main(node)
        elif a == "io":
            if node.first_io:
                r, w = socket.socketpair()
                r.setblocking(False)
                w.setblocking(False)
                self.socks[node.label] = (r, w)
                self.order[r.fileno()] = len(self.order)
                if self.stage < 8:
                    loop.add_reader(r.fileno(), self._io_cb, node.label)
                else:
                    loop.add_reader(r.fileno(), Callback(self._io_cb, node.label, node.label))
            self.pending.append((node.number, node.label))
        else:
            raise AssertionError(a)

    def run_loop(self, line=None):
        """Run the loop until it stops (a top-level `run` line, or the end of
        the setup).  A KeyboardInterrupt that escapes run_forever is a line
        of the trace, and the loop runs again."""
        while not self.hit_limit:
            self.pending[self.next:] = sorted(self.pending[self.next:], key=lambda p: p[0])
            try:
                self.loop.run_forever()
                return
            except KeyboardInterrupt as e:
                self._trace("run_forever raised KeyboardInterrupt: %s" % e)
            except RuntimeError as e:
                if line is None:
                    raise
                self._refused(line, e)
                return

    def run(self):
        for node in self.sc.top:
            self.execute(node)
        if not self.loop.is_closed():  # a scenario may close it itself
            self.run_loop()
        if self.failure is not None:
            raise RuntimeError("a callback failed: %r" % (self.failure,))
        if self.hit_limit:
            self.out.write("# stopped after %d ticks\n" % TICK_LIMIT)
        self.over = True

    def close(self):
        self.over = True
        self.loop.close()
        # Let go of the futures and tasks now, while nothing prints: their
        # __del__ messages are dropped (VirtualLoop.call_exception_handler).
        self.keep.clear()
        self.handles.clear()
        gc.collect()
        for r, w in self.socks.values():
            r.close()
            w.close()


def run_one(name, data, stage, out, err):
    """Parse and run one scenario; returns the exit status (0, 2 or 3)."""
    try:
        scenario = parse(data, stage)
    except ScenarioError as e:
        err.write(b"%s:%d:%d: %s\n" % (name.encode("utf-8", "surrogateescape"),
                                       e.line, e.col, e.message.encode("ascii")))
        return 2
    harness = Harness(scenario, out, stage)
    try:
        harness.run()
    except Exception as e:      # a bug in this harness, never a scenario's fault
        err.write(b"cpython_trace.py: internal error in %s: %s\n"
                  % (name.encode("utf-8", "surrogateescape"), str(e).encode("utf-8", "replace")))
        return 3
    finally:
        harness.close()
    return 0


def read_scenario(path):
    if path == "-":
        return "<stdin>", sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return path, f.read()


USAGE = """usage: cpython_trace.py [--stage N] SCENARIO|-
       cpython_trace.py [--stage N] --out DIR SCENARIO...
The second form runs many scenarios in one process (starting Python and importing
asyncio costs far more than running a scenario) and writes DIR/NAME.trace (the trace)
and DIR/NAME.err (the error line) for each NAME.scn, one of them empty; exit
status: the worst of the runs.
"""


def main(argv):
    stage, outdir, paths = 99, None, []
    args = argv[1:]
    try:
        while args:
            a = args.pop(0)
            if a in ("--stage", "--out"):
                v = args.pop(0)
                if a == "--stage":
                    stage = int(v)
                else:
                    outdir = v
            elif a.startswith("--stage="):
                stage = int(a.split("=", 1)[1])
            elif a.startswith("--out="):
                outdir = a.split("=", 1)[1]
            elif a == "-" or not a.startswith("-"):
                paths.append(a)
            else:
                raise ValueError(a)
    except (IndexError, ValueError):
        paths = []
    if not paths or (outdir is None and len(paths) != 1):
        sys.stderr.write(USAGE)
        return 2
    worst = 0
    for path in paths:
        try:
            name, data = read_scenario(path)
        except OSError as e:
            sys.stderr.write("cpython_trace.py: cannot read '%s': %s\n" % (path, e.strerror))
            worst = max(worst, 2)
            continue
        if outdir is None:
            rc = run_one(name, data, stage, sys.stdout, sys.stderr.buffer)
            sys.stdout.flush()
            return rc
        import io
        import os
        base = os.path.join(outdir, os.path.basename(path))
        if base.endswith(".scn"):
            base = base[:-4]
        out, err = io.StringIO(), io.BytesIO()
        rc = run_one(name, data, stage, out, err)
        # Both files, always (one of them empty), so that a driver can
        # compare a whole folder of C traces with one `diff -r`.
        with open(base + ".trace", "w", encoding="ascii", newline="\n") as f:
            f.write(out.getvalue())
        with open(base + ".err", "wb") as f:
            f.write(err.getvalue())
        worst = max(worst, rc)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv))
