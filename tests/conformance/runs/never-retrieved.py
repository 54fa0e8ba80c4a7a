"""What asyncio says when the last reference to a future goes: an error
nobody looked at ("... exception was never retrieved"), or a task that
never finished ("Task was destroyed but it is pending!").

demo_never_retrieved's twin.  CPython says it in __del__, when the object
is freed; `del` and gc.collect() make that moment the same on every run
(a pending task is in a reference cycle with the future it waits for, so
only the collector frees it).  The messages go through the loop's default
exception handler, logged to stdout (virtual_loop.log_to_stdout).
"""
import asyncio
import gc

from virtual_loop import VirtualLoop, log, log_to_stdout


async def boom():
    log("boom: raise RuntimeError('boom')")
    raise RuntimeError("boom")


async def awaiter(task):
    try:
        await task
    except RuntimeError as e:
        log("awaiter: caught RuntimeError(%r)" % str(e))


async def wait_forever():
    log("wait_forever: awaits a future nobody will set")
    await asyncio.get_running_loop().create_future()


def run_one_tick(loop):
    loop.call_soon(loop.stop)
    loop.run_forever()


log_to_stdout()
loop = VirtualLoop()

print("== 1. a task fails; nobody asks")
t = loop.create_task(boom())
run_one_tick(loop)
print("-- the last reference goes")
del t
gc.collect()

print("== 2. a task fails; exception() retrieves it")
t = loop.create_task(boom())
run_one_tick(loop)
print("t.exception() is %r" % (t.exception(),))
print("-- the last reference goes")
del t
gc.collect()

print("== 3. a task fails; another task awaits it")
t = loop.create_task(boom())
loop.run_until_complete(awaiter(t))
print("-- the last reference goes")
del t
gc.collect()

print("== 4. a future gets an error; nobody asks")
f = loop.create_future()
f.set_exception(RuntimeError("lost"))
print("-- the last reference goes")
del f
gc.collect()

print("== 5. a future gets an error; result() raises it")
f = loop.create_future()
f.set_exception(RuntimeError("lost"))
try:
    f.result()
except RuntimeError as e:
    print("f.result() raised RuntimeError(%r)" % str(e))
print("-- the last reference goes")
del f
gc.collect()

print("== 6. a task still waits when the loop is closed")
t = loop.create_task(wait_forever())
run_one_tick(loop)
loop.close()
print("loop closed")
print("-- the last reference goes")
del t
gc.collect()
print("done")
