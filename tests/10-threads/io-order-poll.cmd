./trace --backend=poll ../../tests/10-threads/io-order.scn
