./trace --backend=select ../../tests/09-tasks/io-order.scn
