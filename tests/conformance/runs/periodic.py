"""Article 004 section 6.2 (run_forever + stop 模式): a heartbeat task and
shutdown_after(10), on run_forever, stopped by loop.stop().

demo_periodic's twin, the article's program on a virtual clock.  At 10 s
both tasks wake in one tick: the heartbeat still beats, because stop()
ends the loop only at the end of the tick.  The heartbeat task is still
pending when the loop is closed; the article's program then drops it, and
CPython reports it the moment the last reference goes.
"""
import asyncio
import gc

from virtual_loop import VirtualLoop, log, log_to_stdout


async def periodic():
    while True:
        log("心跳")
        await asyncio.sleep(2)


async def shutdown_after(seconds):
    await asyncio.sleep(seconds)
    loop = asyncio.get_running_loop()
    log("shutdown_after: loop.stop()")
    loop.stop()   # 停止事件循环


log_to_stdout()
loop = VirtualLoop()
asyncio.set_event_loop(loop)
# 创建任务但不等待，让它们在后台运行
loop.create_task(periodic())
loop.create_task(shutdown_after(10))

print("事件循环启动，10秒后停止")
loop.run_forever()   # 阻塞在这里，直到 loop.stop() 被调用
log("run_forever returned", loop)
loop.close()
print("已停止")
asyncio.set_event_loop(None)
gc.collect()   # the pending task is in a cycle with its sleep's future
print("the pending task is gone")
