./trace --backend=epoll ../../tests/10-threads/io-order.scn
