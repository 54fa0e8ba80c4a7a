./trace --backend=select ../../tests/10-threads/threadsafe.scn
