./trace --backend=bogus ../../tests/07-selector/threadsafe.scn
