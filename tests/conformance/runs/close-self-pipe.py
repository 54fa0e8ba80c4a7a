"""Article 003's close() sketch calls _make_self_pipe() again.  What does
CPython's loop.close() do with the self-pipe and the selector's fd?"""
import asyncio
import os


def is_open(fd):
    try:
        os.fstat(fd)
        return "open"
    except OSError as e:
        return "closed (%s)" % os.strerror(e.errno)


loop = asyncio.SelectorEventLoop()
fds = {"self-pipe, read end (_ssock)": loop._ssock.fileno(),
       "self-pipe, write end (_csock)": loop._csock.fileno(),
       "selector (epoll fd)": loop._selector.fileno()}
for when in ("before close()", "after close()"):
    print("--", when)
    for what, fd in fds.items():
        print("%-30s %s" % (what, is_open(fd)))
    if when == "before close()":
        loop.close()
print("_ssock, _csock, _selector:", loop._ssock, loop._csock, loop._selector)
try:
    loop.run_forever()
except RuntimeError as e:
    print("run_forever() raises RuntimeError: %s" % e)
