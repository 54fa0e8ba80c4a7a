"""Article 003's thread sketches, against CPython 3.11: what
run_coroutine_threadsafe returns, why call_soon_threadsafe may not call
call_soon, and whether close() waits for the default executor.

The loop runs in a thread of its own, as in the article.  Every line
printed is decided by the program, never by thread timing: each step waits
for the one before it (an Event, a result, a join)."""
import asyncio
import concurrent.futures
import threading
import time

loop = asyncio.new_event_loop()
t = threading.Thread(target=loop.run_forever, name="loop")
t.start()


async def async_task():
    return 42


print("-- 1. what run_coroutine_threadsafe returns")
future = asyncio.run_coroutine_threadsafe(async_task(), loop)
print("type:", type(future).__module__ + "." + type(future).__qualname__)
print("result(timeout=5):", future.result(timeout=5))

print("-- 2. the article's sketch: an asyncio future, waited on from this thread")
sketch = loop.create_future()        # what the sketch returns
loop.call_soon_threadsafe(sketch.set_result, 42)
try:
    print(sketch.result(timeout=5))
except TypeError as e:
    print("TypeError:", e)
try:
    print(asyncio.Future(loop=loop).result())
except asyncio.InvalidStateError as e:
    print("InvalidStateError:", e)

print("-- 3. debug mode: call_soon from another thread, then call_soon_threadsafe")
ran = threading.Event()
loop.call_soon_threadsafe(loop.set_debug, True)
asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(timeout=5)
try:
    loop.call_soon(ran.set)
except RuntimeError as e:
    print("call_soon: RuntimeError:", e)
loop.call_soon_threadsafe(ran.set)
print("call_soon_threadsafe: ran on the loop:", ran.wait(timeout=5))

print("-- 4. close() and a job still running in the default executor")
started, finish = threading.Event(), threading.Event()


def job():
    started.set()
    finish.wait(timeout=5)
    return "job done"


cf = concurrent.futures.Future()


def submit():
    f = loop.run_in_executor(None, job)
    cf.set_result((f, loop._default_executor))


loop.call_soon_threadsafe(submit)
wrapped, executor = cf.result(timeout=5)
started.wait(timeout=5)
loop.call_soon_threadsafe(loop.stop)
t.join()
loop.close()
print("close() returned while the job runs:", not finish.is_set())
try:
    loop.run_in_executor(None, job)
except RuntimeError as e:
    print("run_in_executor after close: RuntimeError:", e)
try:
    executor.submit(job)
except RuntimeError as e:
    print("the old default executor: RuntimeError:", e)
finish.set()
executor.shutdown(wait=True)
print("the job's asyncio future, after the job ended:",
      "done" if wrapped.done() else "pending (its result was dropped: the loop is closed)")
