"""thread_loop.py -- twin of code/10-threads/demo_thread_loop.c: article 004
§8.3, a loop made in the main thread and run in a thread named 'worker',
and what is refused (a loop already running; a second loop in a thread that
runs one) -- not, as §8.3 says, running a loop in another thread.

Every line is printed in an order the program fixes (the main thread waits
for the worker where the two could interleave), so the output is the same
bytes each run and in C."""
import asyncio
import threading

names = {}


def name(loop):
    if loop not in names:
        names[loop] = f"<loop {len(names) + 1}>"
    return names[loop]


def here():
    return threading.current_thread().name


holding = threading.Event()   # the worker is inside hold()
release = threading.Event()   # the main thread is done trying


def worker(loop):
    asyncio.set_event_loop(loop)
    print(f"{here()}: set_event_loop({name(loop)}); run_forever()")
    loop.run_forever()
    print(f"{here()}: run_forever() returned")


def job(n):
    print(f"{here()}: job {n}: get_running_loop() -> {name(asyncio.get_running_loop())},"
          f" get_event_loop() -> {name(asyncio.get_event_loop())}")


def hold():
    """Stay inside a callback of the running loop until the main thread has
    tried what it tries."""
    holding.set()
    release.wait()


def second_loop():
    other = asyncio.new_event_loop()
    print(f"{here()}: new_event_loop() -> {name(other)}")
    try:
        other.run_forever()
    except RuntimeError as e:
        print(f"{here()}: {name(other)}.run_forever() -> RuntimeError: {e}")
    other.close()


print("-- 8.3: a loop made in MainThread runs in thread 'worker'")
loop = asyncio.new_event_loop()
print(f"{here()}: new_event_loop() -> {name(loop)}")
loop.call_soon(hold)
t = threading.Thread(target=worker, args=(loop,), name="worker")
t.start()
holding.wait()
print(f"{here()}: {name(loop)} is running in 'worker'")

print("-- what is refused: a loop already running, from another thread")
try:
    loop.run_forever()
except RuntimeError as e:
    print(f"{here()}: {name(loop)}.run_forever() -> RuntimeError: {e}")
try:
    loop.close()
except RuntimeError as e:
    print(f"{here()}: {name(loop)}.close() -> RuntimeError: {e}")
release.set()

print("-- handing it work: call_soon_threadsafe(), then call_soon_threadsafe(stop)")
for n in (1, 2, 3):
    loop.call_soon_threadsafe(job, n)
loop.call_soon_threadsafe(second_loop)
loop.call_soon_threadsafe(loop.stop)
t.join()
print(f"{here()}: joined 'worker'")

print("-- the same loop, now run by MainThread: a loop belongs to no thread")
loop.call_soon(job, 4)
loop.call_soon(loop.stop)
loop.run_forever()
loop.close()
print(f"{here()}: {name(loop)}.close()")
