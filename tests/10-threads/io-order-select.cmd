./trace --backend=select ../../tests/10-threads/io-order.scn
