"""Article 004 section 6.1 (基本流程): Hello, sleep(1), World.

demo_hello's twin.  The article's manual version (new loop,
run_until_complete, close), then the same main() through asyncio.run, on a
virtual clock: asyncio.Runner(loop_factory=...) is asyncio.run with the
loop it makes chosen by the caller, which is what loop_run_main_on() is.
"""
import asyncio

from virtual_loop import VirtualLoop, log


async def main():
    log("Hello")
    await asyncio.sleep(1)
    log("World")


print("-- by hand: new loop, run_until_complete(main()), close()")
loop = VirtualLoop()
try:
    result = loop.run_until_complete(main())
    print("run_until_complete returned %r after %d ticks" % (result, loop.ticks))
finally:
    loop.close()

print("-- asyncio.run(main())")
with asyncio.Runner(loop_factory=VirtualLoop) as runner:
    result = runner.run(main())
print("asyncio.run returned %r" % (result,))
