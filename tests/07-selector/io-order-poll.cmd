./trace --backend=poll ../../tests/07-selector/io-order.scn
