"""Article 004 section 6.3 (关闭事件循环的注意事项): safe_close(loop) cancels
every task that is not done, waits for them with gather(return_exceptions=
True), and only then closes the loop.

demo_safe_close's twin, on a virtual clock.  Four tasks are left when the
loop stops at 3 s: two sleepers that let the cancellation through, one that
cleans up for a second before it lets it through, one that swallows it and
returns.  A fifth finished before: all_tasks() does not list it.  The
article iterates over a set (no order); here the tasks are sorted by name,
which is the order the C loop lists them in (the order of creation).
"""
import asyncio

from virtual_loop import VirtualLoop, log


async def sleeper(delay):
    name = asyncio.current_task().get_name()
    try:
        await asyncio.sleep(delay)
        log(name + ": woke up, returns")
        return name + " woke up"
    except asyncio.CancelledError:
        log(name + ": CancelledError, lets it through")
        raise


async def cleaner():
    try:
        await asyncio.sleep(100)
    except asyncio.CancelledError:
        log("c-cleaner: CancelledError, cleans up for 1 s first")
        await asyncio.sleep(1)
        log("c-cleaner: clean, lets it through")
        raise


async def stubborn():
    try:
        await asyncio.sleep(100)
    except asyncio.CancelledError:
        log("d-stubborn: CancelledError, swallows it and returns")
    return "d-stubborn finished anyway"


def show(x):
    if isinstance(x, BaseException):
        return "%s(%s)" % (type(x).__name__, repr(str(x)) if str(x) else "")
    return repr(x)


def safe_close(loop):
    # 获取所有未完成任务
    tasks = sorted(asyncio.all_tasks(loop), key=lambda t: t.get_name())
    log("safe_close: all_tasks() = [%s]" % ", ".join(t.get_name() for t in tasks), loop)
    for task in tasks:
        task.cancel()
    # 等待所有任务取消完成（可选）
    results = loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    log("gather: [%s]" % ", ".join(show(r) for r in results), loop)
    loop.close()


loop = VirtualLoop()
loop.create_task(sleeper(5), name="a-sleeper")
loop.create_task(sleeper(50), name="b-sleeper")
loop.create_task(cleaner(), name="c-cleaner")
loop.create_task(stubborn(), name="d-stubborn")
loop.create_task(sleeper(1), name="e-quick")
loop.call_later(3, loop.stop)
loop.run_forever()
log("run_forever returned", loop)
safe_close(loop)
print("closed")
