./trace --backend=epoll ../../tests/09-tasks/threadsafe.scn
