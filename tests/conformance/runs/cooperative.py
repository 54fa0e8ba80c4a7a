"""Article 004 section 2.3 (事件循环是"协作式"而非"抢占式"): a coroutine that
never awaits keeps the loop; one that awaits asyncio.sleep(0) gives it back.

demo_cooperative's twin.  Each coroutine schedules a callback that sets a
flag, then spins until it sees the flag.  bad() never awaits, so the
callback cannot run while it spins: it gives up after SPINS turns (the
article's bad() would spin forever).  good() awaits sleep(0) in its loop:
the callback runs in the next tick and good() sees the flag at once.
"""
import asyncio

from virtual_loop import VirtualLoop, log

SPINS = 100000
flag = False


def set_flag():
    global flag
    flag = True
    log("callback: flag set")


async def bad():
    global flag
    flag = False
    asyncio.get_running_loop().call_soon(set_flag)
    log("bad: call_soon(set_flag), then spins without await")
    n = 0
    while not flag and n < SPINS:       # while True: pass
        n += 1
    log("bad: gave up after %d turns; flag is %s" % (n, flag))


async def good():
    global flag
    flag = False
    asyncio.get_running_loop().call_soon(set_flag)
    log("good: call_soon(set_flag), then spins with await asyncio.sleep(0)")
    n = 0
    while not flag:
        n += 1
        await asyncio.sleep(0)           # 主动让出控制权
    log("good: saw the flag after %d turn(s)" % n)


loop = VirtualLoop()
for coro in (bad, good):
    print("-- run_until_complete(%s())" % coro.__name__)
    loop.run_until_complete(coro())
loop.close()
