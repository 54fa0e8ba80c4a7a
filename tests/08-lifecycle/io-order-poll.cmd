./trace --backend=poll ../../tests/08-lifecycle/io-order.scn
