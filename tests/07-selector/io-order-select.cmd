./trace --backend=select ../../tests/07-selector/io-order.scn
