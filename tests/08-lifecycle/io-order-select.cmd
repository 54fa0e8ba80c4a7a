./trace --backend=select ../../tests/08-lifecycle/io-order.scn
