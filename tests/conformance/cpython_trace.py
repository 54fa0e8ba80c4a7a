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
import logging
import re
import selectors
import signal
import socket
import sys
import traceback

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


# --------------------------------------------------------------------- parsing

class ScenarioError(Exception):
    def __init__(self, line, col, message):
        super().__init__(message)
        self.line, self.col, self.message = line, col, message


class Node:
    """One action line.  `children` run each time this line's callback runs."""
    __slots__ = ("action", "number", "label", "line", "col", "label_col",
                 "indent", "children", "first_io")

    def __init__(self, action, line, col, indent):
        self.action = action          # str: 'soon', 'later', ...
        self.number = None            # float for later / at / io
        self.label = None             # str
        self.line, self.col, self.indent = line, col, indent
        self.label_col = None
        self.children = []
        self.first_io = False         # for io: is this the label's first io line


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
    defined = {}                      # label -> (kind 'timer'|'io', line number)
    cancels = []                      # cancel Nodes, checked after the whole file
    stack = []                        # open lines, outermost first: [Node]
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
            if parent.action not in ("soon", "later", "at", "io", "threadsafe", "sighandler"):
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

        # --- the action
        word, wcol = tokens[0]
        if word not in ACTIONS and not (stage >= 8 and word in ACTIONS_08):
            raise ScenarioError(lineno, wcol,
                                "unknown action %s (expected soon, later, at, io, stop or cancel)" % q(word))
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
        node = Node(word.decode(), lineno, wcol, indent)

        # --- the arguments, left to right
        if word in (b"stop", b"raise", b"interrupt", b"run", b"close", b"sigremove"):
            wants = []
        elif word in (b"later", b"at", b"io"):
            wants = ["number", "label"]
        elif word in (b"block", b"debug", b"signal"):
            wants = ["number"]
        else:
            wants = ["label"]
        for k, kind in enumerate(wants):
            prefix = b" ".join(t for t, _ in tokens[:k + 1])
            if k + 1 >= len(tokens):
                last, lcol = tokens[-1]
                raise ScenarioError(lineno, lcol + len(last),
                                    "expected a %s after %s, got end of line" % (kind, q(prefix)))
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
                node.label, node.label_col = label, tcol
                if word == b"handler":
                    if label not in HANDLERS:
                        raise ScenarioError(lineno, tcol, "unknown handler %s (expected default, "
                                            "custom or failing)" % q(tok))
                elif word == b"cancel":
                    pass
                elif word == b"io" and defined.get(label, ("io",))[0] == "io":
                    if label not in defined:
                        if len(sc.io_labels) >= MAX_IO_LABELS:
                            raise ScenarioError(lineno, tcol,
                                                "too many io labels (at most %d)" % MAX_IO_LABELS)
                        defined[label] = ("io", lineno)
                        sc.io_labels.append(label)
                        sc.io_node[label] = node
                        node.first_io = True
                elif label in defined:
                    raise ScenarioError(lineno, tcol, "label %s is already defined on line %d"
                                        % (q(tok), defined[label][1]))
                else:
                    defined[label] = ("timer", lineno)
        if len(tokens) > len(wants) + 1:
            tok, tcol = tokens[len(wants) + 1]
            prefix = b" ".join(t for t, _ in tokens[:len(wants) + 1])
            raise ScenarioError(lineno, tcol, "unexpected %s after %s" % (q(tok), q(prefix)))

        if parent is None:
            sc.top.append(node)
        else:
            parent.children.append(node)
        if node.action == "cancel":
            cancels.append(node)
        stack.append(node)

    # Pass 2: what a cancel refers to is known only once the whole file is read.
    for node in cancels:
        kind = defined.get(node.label, (None,))[0]
        if kind is None:
            raise ScenarioError(node.line, node.label_col,
                                "cancel of unknown label '%s' (no soon, later or at line defines it)"
                                % node.label)
        if kind == "io":
            raise ScenarioError(node.line, node.label_col,
                                "cannot cancel io label '%s' (only soon, later and at labels)" % node.label)
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
        self.out.write("%.6f tick %d %s\n" % (self.loop.time(), self.ticks, label))

    def _refused(self, node, exc):
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

    def close(self):
        self.loop.close()
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
