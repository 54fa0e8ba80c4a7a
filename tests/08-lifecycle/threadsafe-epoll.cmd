./trace --backend=epoll ../../tests/08-lifecycle/threadsafe.scn
