./trace --backend=epoll ../../tests/08-lifecycle/io-order.scn
