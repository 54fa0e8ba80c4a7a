./trace --backend=epoll ../../tests/11-fast/threadsafe.scn
