./trace --backend=epoll ../../tests/09-tasks/io-order.scn
