"""Exercise 2 (chapter 11)'s order of posts, asserted on CPython 3.11: where
another thread's call_soon_threadsafe lands among the loop's own call_soons,
and in which tick it runs.  Run it:
    /usr/bin/python3 tests/11-fast/exercises/2-inbox.py
it prints nothing when every assertion holds.  The C test numbers the ticks
with a wait hook; here a wrapper around the selector's select() does it."""
import asyncio
import threading

log = []
tick = 0
post_in_poll = None


def new_loop():
    global tick
    log.clear()
    tick = 0
    loop = asyncio.new_event_loop()
    select = loop._selector.select

    def counting_select(timeout=None):  # once per tick (_run_once)
        global tick, post_in_poll
        tick += 1
        if post_in_poll is not None:
            name, post_in_poll = post_in_poll, None
            post_from_thread(loop, name)
        return select(timeout)

    loop._selector.select = counting_select
    return loop


def say(name):
    log.append(f"{name}@{tick}")


def post_from_thread(loop, name):
    """Another thread posts say(name), and is joined: it happened before
    whatever this thread does next."""
    t = threading.Thread(target=loop.call_soon_threadsafe, args=(say, name))
    t.start()
    t.join()


# A post before a call_soon runs before it, whether _ready was empty or not.
loop = new_loop()


def a():
    say("A")
    post_from_thread(loop, "P1")
    loop.call_soon(say, "Q1")
    post_from_thread(loop, "P2")
    post_from_thread(loop, "P3")
    loop.call_soon(say, "Q2")


def b():
    say("B")
    loop.call_soon(r)


def r():
    say("R")
    post_from_thread(loop, "P4")
    loop.call_soon(q3)


def q3():
    say("Q3")
    loop.stop()


loop.call_soon(a)
loop.call_soon(b)
loop.run_forever()
loop.close()
assert " ".join(log) == "A@1 B@1 P1@2 Q1@2 P2@2 P3@2 Q2@2 R@2 P4@3 Q3@3", log

# A post made during the poll, before the snapshot (ntodo), runs in this
# tick; one made while a callback of the tick runs, in the next.
loop = new_loop()


def s():
    say("S")
    post_from_thread(loop, "T")
    loop.call_soon(say, "U")
    loop.call_soon(loop.stop)


loop.call_soon(s)
post_in_poll = "P"
loop.run_forever()
loop.close()
assert " ".join(log) == "S@1 P@1 T@2 U@2", log
