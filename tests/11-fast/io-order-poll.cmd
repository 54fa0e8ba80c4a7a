./trace --backend=poll ../../tests/11-fast/io-order.scn
