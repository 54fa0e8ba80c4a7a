./trace --backend=epoll ../../tests/10-threads/threadsafe.scn
