./trace --backend=poll ../../tests/10-threads/threadsafe.scn
