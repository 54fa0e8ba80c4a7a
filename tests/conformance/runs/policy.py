"""policy.py -- twin of code/10-threads/demo_policy.c: the loop of a thread,
article 004 §4.3 and §9.1-9.4, rule by rule, as CPython 3.11.2 does them.

Loops are named by order of creation (<loop 1>, <loop 2>...), never by
address, so the C demo can print the same bytes.  Warnings are errors here:
a DeprecationWarning (§9.4's claim) would print as one."""
import asyncio
import threading
import warnings

warnings.simplefilter("error")

names = {}


def name(loop):
    if loop is None:
        return "None"
    if loop not in names:
        names[loop] = f"<loop {len(names) + 1}>"
    return names[loop]


def here():
    return threading.current_thread().name


def ask(what, call):
    """Print `what in THREAD -> <loop N>`, or the error it raised."""
    try:
        print(f"{what} in {here()} -> {name(call())}")
    except Exception as e:
        print(f"{what} in {here()} -> {type(e).__name__}: {e}")


def in_thread(thread_name, body):
    """Run body in a new thread (named, or unnamed as Thread-N) and wait."""
    class Unnamed(threading.Thread):  # no target: no " (target)" in the name
        def run(self):
            body()
    t = threading.Thread(target=body, name=thread_name) if thread_name else Unnamed()
    t.start()
    t.join()


async def main():
    return None


print("(warnings are errors here: a DeprecationWarning would print as one)")

print("-- 4.3: the main thread, set_event_loop() never called")
ask("get_event_loop()", asyncio.get_event_loop)
ask("get_event_loop()", asyncio.get_event_loop)
ask("get_running_loop()", asyncio.get_running_loop)

print("-- 4.3: new_event_loop(), then set_event_loop()")
loop2 = asyncio.new_event_loop()
print(f"new_event_loop() -> {name(loop2)}, not current:")
ask("get_event_loop()", asyncio.get_event_loop)
asyncio.set_event_loop(loop2)
print(f"set_event_loop({name(loop2)}) in {here()}")
ask("get_event_loop()", asyncio.get_event_loop)

print("-- set_event_loop(None): the main thread gets no loop made any more")
asyncio.set_event_loop(None)
print(f"set_event_loop(None) in {here()}")
ask("get_event_loop()", asyncio.get_event_loop)

print("-- 9.2, 9.4: a thread that set no loop")
in_thread("worker", lambda: ask("get_event_loop()", asyncio.get_event_loop))
in_thread(None, lambda: ask("get_event_loop()", asyncio.get_event_loop))


def worker_sets_its_own():
    loop = asyncio.new_event_loop()
    print(f"new_event_loop() in {here()} -> {name(loop)}")
    asyncio.set_event_loop(loop)
    print(f"set_event_loop({name(loop)}) in {here()}")
    ask("get_event_loop()", asyncio.get_event_loop)
    loop.close()


in_thread("worker", worker_sets_its_own)
ask("get_event_loop()", asyncio.get_event_loop)  # the worker's loop is its own

print("-- inside a running loop: the running loop, whatever is current")
asyncio.set_event_loop(loop2)
print(f"set_event_loop({name(loop2)}) in {here()}")
loop4 = asyncio.new_event_loop()
print(f"new_event_loop() -> {name(loop4)}; {name(loop4)}.run_forever(), and in a callback:")


def inside():
    ask("  get_event_loop()", asyncio.get_event_loop)
    ask("  get_running_loop()", asyncio.get_running_loop)
    # 9.3: a second loop, the same loop, asyncio.run(): three refusals
    try:
        loop2.run_forever()
    except RuntimeError as e:
        print(f"  {name(loop2)}.run_forever() -> RuntimeError: {e}")
    try:
        loop4.run_forever()
    except RuntimeError as e:
        print(f"  {name(loop4)}.run_forever() -> RuntimeError: {e}")
    coro = main()
    try:
        asyncio.run(coro)
    except RuntimeError as e:
        print(f"  asyncio.run(main()) -> RuntimeError: {e}")
    coro.close()
    loop4.stop()


loop4.call_soon(inside)
loop4.run_forever()
ask("get_event_loop()", asyncio.get_event_loop)
loop4.close()

print("-- 9.1: asyncio.run(), then get_event_loop()")
asyncio.run(main())
print("asyncio.run(main()) returned")
ask("get_event_loop()", asyncio.get_event_loop)

print("-- 9.1: where 'Event loop is closed' does come from: a closed loop left current")
asyncio.set_event_loop(loop2)
print(f"set_event_loop({name(loop2)}) in {here()}")
loop2.close()
print(f"{name(loop2)}.close()")
try:
    asyncio.get_event_loop().run_forever()
except RuntimeError as e:
    print(f"get_event_loop().run_forever() in {here()} -> RuntimeError: {e}")
asyncio.set_event_loop(None)
for loop in list(names):
    loop.close()
print("done")
