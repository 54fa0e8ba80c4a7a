./trace --backend=epoll ../../tests/11-fast/io-order.scn
