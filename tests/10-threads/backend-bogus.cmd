./trace --backend=bogus ../../tests/10-threads/threadsafe.scn
