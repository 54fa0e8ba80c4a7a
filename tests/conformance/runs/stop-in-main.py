"""Article 004, 题目5: loop.stop() inside the coroutine that asyncio.run runs.

First the exercise's program as printed, then the same with one await after
stop() (the exercise speaks of "less than 2 seconds"): what does each do?
"""
import asyncio
import time


async def main():                    # the exercise's program, as printed
    print("开始")
    loop = asyncio.get_running_loop()
    loop.stop()
    print("结束")


async def main_with_await():         # the same, awaiting after stop()
    print("开始")
    loop = asyncio.get_running_loop()
    loop.stop()
    await asyncio.sleep(2)
    print("结束")


for coro in (main, main_with_await):
    print("-- asyncio.run(%s())" % coro.__name__)
    start = time.monotonic()
    try:
        asyncio.run(coro())
        print("asyncio.run returned")
    except RuntimeError as e:
        print("asyncio.run raised RuntimeError: %s" % e)
    print("under a second: %s" % (time.monotonic() - start < 1))
