./trace --backend=select ../../tests/11-fast/io-order.scn
