"""Article 004, exercise 4, question 3: a callback of the ready queue raises.

Section 1 of chapter 08's demo_errors, on CPython's own loop: the default
exception handler logs the message, the handle, then the traceback, which
ends with the line the C loop prints in its place; the next callback of
the tick runs.  (Virtual time is not needed: nothing here waits.)  The log goes to stdout,
with the repository's path left out, so that the output is the same in
every clone.
"""
import asyncio
import logging
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))) + "/"


class Relative(logging.Formatter):
    def format(self, record):
        return super().format(record).replace(ROOT, "")


handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(Relative("%(message)s"))
logging.getLogger("asyncio").addHandler(handler)
logging.getLogger("asyncio").propagate = False


def a():
    print("a ran", flush=True)


def b():
    print("b ran", flush=True)
    1 / 0


def d(loop):
    print("d ran", flush=True)
    loop.stop()


loop = asyncio.new_event_loop()
loop.call_soon(a)
loop.call_soon(b)
loop.call_soon(d, loop)
loop.run_forever()
print("run_forever returned; is_closed:", loop.is_closed())
loop.close()
