"""Where CPython queues the self-pipe's reader, on each selector.

One callback blocks while another thread makes a socket readable and then
calls call_soon_threadsafe(ts).  Both fds are ready when the next poll looks.
Which handles does that tick run, in which order?  The loop's reader of the
self-pipe, _read_from_self, is wrapped to say when it runs.
"""
import asyncio
import selectors
import socket
import threading


class Loop(asyncio.SelectorEventLoop):
    def _read_from_self(self):          # the reader _make_self_pipe registered
        self.order.append("_read_from_self")
        super()._read_from_self()


def tick_order(selector_class):
    loop = Loop(selector_class())
    loop.order = []
    r, w = socket.socketpair()
    r.setblocking(False)

    # @region scene
    def on_sock():
        r.recv(4096)
        loop.order.append("sock")

    def other_thread():
        w.send(b"x")                    # first the socket becomes readable,
        loop.call_soon_threadsafe(loop.order.append, "ts")   # then the pipe

    def blocking():                     # the loop is busy: nobody polls
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        loop.call_soon(loop.stop)       # the next tick is the last

    loop.add_reader(r.fileno(), on_sock)
    loop.call_soon(blocking)
    loop.run_forever()
    # @end scene
    lower = loop._ssock.fileno() < r.fileno()
    loop.close()
    r.close()
    w.close()
    return loop.order, lower


for name in ("SelectSelector", "PollSelector", "EpollSelector"):
    order, lower = tick_order(getattr(selectors, name))
    print("%-15s %-40s self-pipe's fd is the lower: %s" % (name, order, lower))
print("DefaultSelector is", selectors.DefaultSelector.__name__)
