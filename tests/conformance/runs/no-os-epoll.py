"""Article 003's epoll loop calls os.epoll_create, os.epoll_ctl and
os.epoll_wait.  Python has no such functions: epoll is select.epoll, an
object whose methods are register, modify, unregister and poll.  (Linux)"""
import os
import select

for name in ("os.epoll_create", "os.epoll_ctl", "os.epoll_wait",
             "select.epoll", "select.EPOLLIN"):
    module, attr = name.split(".")
    print("%-16s %s" % (name, hasattr({"os": os, "select": select}[module], attr)))
ep = select.epoll()
print("select.epoll() has:", ", ".join(m for m in dir(ep) if not m.startswith("_")))
ep.close()
