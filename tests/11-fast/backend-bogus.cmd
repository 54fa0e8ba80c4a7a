./trace --backend=bogus ../../tests/11-fast/threadsafe.scn
