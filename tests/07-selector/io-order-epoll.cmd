./trace --backend=epoll ../../tests/07-selector/io-order.scn
