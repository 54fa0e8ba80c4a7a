"""What the Python twins of chapter 09's demos share (no .cmd: not a run).

VirtualLoop is CPython's own SelectorEventLoop with two things replaced, as
in cpython_trace.py: the clock (time() reads a number) and the wait (the
selector's select(timeout) moves that number by timeout, then only looks at
the fds).  It counts its ticks there, once per _run_once, where the C demos'
wait hook counts them (code/09-tasks/demo_ticks.h), so "tick N" means the
same on both sides.  Every scheduling decision is still CPython's.

log() prints a line as the C demos print it: virtual time, tick, text.

log_to_stdout() sends asyncio's logger (the default exception handler) to
stdout, in the C default handler's shape: the message and the context's
other keys, then the error as "TYPE: MESSAGE", which is the last line of the
traceback Python prints.  One more thing differs and is rewritten: Python
names a coroutine with the file and line it stands at ("main() running at
/path/x.py:12"), which C cannot know; both print "main()".
"""
import asyncio
import logging
import re
import selectors
import sys
import traceback


class TickSelector(selectors.SelectSelector):
    def __init__(self):
        super().__init__()
        self.loop = None
        self.ticks = 0

    def select(self, timeout=None):
        self.ticks += 1
        if timeout is None:          # the demos never wait for I/O that cannot come
            raise RuntimeError("the loop would block forever")
        self.loop._vnow += timeout
        return super().select(0)


class VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self):
        self._vnow = 0.0
        selector = TickSelector()
        super().__init__(selector)
        selector.loop = self
        self._clock_resolution = 1e-09   # what the C virtual loop uses

    def time(self):
        return self._vnow

    @property
    def ticks(self):
        return self._selector.ticks


def log(text, loop=None):
    loop = loop or asyncio.get_running_loop()
    print("%6.3f  tick %2d  %s" % (loop.time(), loop.ticks, text), flush=True)


CORO_WHERE = re.compile(r"\(\) (?:running|done, defined) at [^>]*")


class _Formatter(logging.Formatter):
    def format(self, record):
        return CORO_WHERE.sub("()", super().format(record))

    def formatException(self, ei):
        return "".join(traceback.format_exception_only(ei[0], ei[1])).rstrip("\n")


def log_to_stdout():
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(_Formatter("%(message)s"))
    logger = logging.getLogger("asyncio")
    logger.addHandler(handler)
    logger.propagate = False
