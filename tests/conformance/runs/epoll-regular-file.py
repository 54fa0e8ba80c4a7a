"""Article 004, 8.2: which selector refuses a regular file?  (Linux)

Registers this very file, opened for reading, with each selector that
Linux has, then asks each one that accepted it what is ready.
"""
import selectors

for name in ("SelectSelector", "PollSelector", "EpollSelector", "KqueueSelector"):
    if not hasattr(selectors, name):
        print("%-15s not on this system" % name)
        continue
    with open(__file__, "rb") as f, getattr(selectors, name)() as sel:
        try:
            sel.register(f, selectors.EVENT_READ)
        except OSError as e:
            print("%-15s register: %s: %s" % (name, type(e).__name__, e))
            continue
        ready = sel.select(0)
        print("%-15s register: accepted; select(0): %s" %
              (name, "readable" if ready else "nothing ready"))
