"""Exercise 3 (chapter 11)'s baseline, asserted on CPython 3.11: asyncio
writes a byte to its self-pipe for every call_soon_threadsafe, from any
thread, asleep or not -- the byte per call that loop_set_wakeup(.., 0)
keeps, and that a new loop of chapter 11 keeps for its own thread.  Run it:
    /usr/bin/python3 tests/11-fast/exercises/3-wakeup.py
it prints nothing when every assertion holds."""
import asyncio
import threading

loop = asyncio.new_event_loop()
writes = 0
write_to_self = loop._write_to_self


def counting_write_to_self():
    global writes
    writes += 1
    write_to_self()


loop._write_to_self = counting_write_to_self  # call_soon_threadsafe calls it
ran = []

# Another thread posts to the loop before it runs: a byte each, which wait
# in the pipe for the first tick of the run.
poster = threading.Thread(target=lambda: [loop.call_soon_threadsafe(ran.append, -1)
                                          for _ in range(3)])
poster.start()
poster.join()
assert writes == 3, writes
writes = 0

# Another thread, 1,000 posts while the loop sleeps in its poll: 1,000 bytes,
# and every post runs, in order.
asleep = threading.Event()
select = loop._selector.select


def select_and_say(timeout=None):
    if timeout is None:  # nothing to do: the loop is going to sleep
        asleep.set()
    return select(timeout)


loop._selector.select = select_and_say
runner = threading.Thread(target=loop.run_forever)
runner.start()
assert asleep.wait(timeout=5)
done = threading.Event()
for i in range(1000):
    loop.call_soon_threadsafe(ran.append, i)
loop.call_soon_threadsafe(done.set)
assert done.wait(timeout=5)
assert writes == 1001, writes
assert ran == [-1, -1, -1] + list(range(1000)), ran[:10]

# The loop's own thread, in a callback: a byte per call too.
own = []


def post_three():
    before = writes
    for i in range(3):
        loop.call_soon_threadsafe(ran.append, i)
    own.append(writes - before)
    loop.call_soon(loop.stop)


loop.call_soon_threadsafe(post_three)
runner.join()
loop.run_until_complete(asyncio.sleep(0))  # whatever the stop left queued
loop.close()
assert own == [3], own
