./trace --backend=epoll ../../tests/07-selector/threadsafe.scn
