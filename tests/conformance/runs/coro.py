"""What an await costs, in ticks (demo_coro's twin).

1. ticker(): a coroutine that awaits futures a timer sets.  demo_coro runs
   it twice, written once as a hand-written switch and once with coro.h's
   macros; both print these lines.
2. What each kind of await costs: a coroutine awaited directly runs inside
   the caller's step (no tick); asyncio.sleep(0) gives the loop one turn;
   a new task takes its own step, then the caller's wakeup is one more;
   a task that is already done is not waited for at all (Future.__await__
   yields only while the future is pending).
"""
import asyncio

from virtual_loop import VirtualLoop, log


async def ticker(n):
    loop = asyncio.get_running_loop()
    for i in range(1, n + 1):
        fut = loop.create_future()
        loop.call_later(1, fut.set_result, 10 * i)
        log("ticker: await a future a timer sets in 1 s")
        value = await fut
        log("ticker: got %d" % value)
    return n


async def child():
    log("child: runs, returns 42")
    return 42


async def parent():
    log("parent: await child()")
    value = await child()
    log("parent: got %d" % value)
    log("parent: await asyncio.sleep(0)")
    await asyncio.sleep(0)
    log("parent: back")
    log("parent: await create_task(child())")
    task = asyncio.create_task(child())
    value = await task
    log("parent: got %d" % value)
    log("parent: await the same task again (it is done)")
    value = await task
    log("parent: got %d" % value)


loop = VirtualLoop()
for how in ("by hand", "with the macros"):
    print("-- ticker(2), written %s" % how)
    result = loop.run_until_complete(ticker(2))
    print("run_until_complete: %d" % result)
print("-- what an await costs")
loop.run_until_complete(parent())
loop.close()
