"""Article 004, 题目5: loop.stop() inside the coroutine asyncio.run runs,
traced on a virtual clock (demo_q5's twin; stop-in-main.py is the same
question on the real clock).

1. The exercise's program as printed: stop() only asks the loop to stop at
   the end of the tick; main() goes on, prints 结束 and returns in that
   tick, so run_until_complete finds its task done: no error.
2. With an await after stop() (the exercise's "less than 2 seconds"): the
   tick ends with main() suspended, the loop stops, and run_until_complete
   raises RuntimeError; asyncio.run's cleanup then cancels main's task,
   which is where it ends: 结束 is never printed.
3. The fix the article asks for: no stop(); main() returns.
"""
import asyncio

from virtual_loop import VirtualLoop, log


async def main():                    # the exercise's program, as printed
    log("开始")
    loop = asyncio.get_running_loop()
    loop.stop()
    log("结束")


async def main_with_await():         # the same, awaiting after stop()
    log("开始")
    loop = asyncio.get_running_loop()
    loop.stop()
    try:
        await asyncio.sleep(2)
    except asyncio.CancelledError:
        log("main_with_await: CancelledError (asyncio.run's cleanup)")
        raise
    log("结束")


async def main_fixed():              # the fix: no stop(), main returns
    log("开始")
    await asyncio.sleep(2)
    log("结束")


for coro in (main, main_with_await, main_fixed):
    print("-- asyncio.run(%s())" % coro.__name__)
    try:
        with asyncio.Runner(loop_factory=VirtualLoop) as runner:
            runner.run(coro())
        print("asyncio.run returned")
    except RuntimeError as e:
        print("asyncio.run raised RuntimeError: %s" % e)
