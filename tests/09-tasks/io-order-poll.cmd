./trace --backend=poll ../../tests/09-tasks/io-order.scn
