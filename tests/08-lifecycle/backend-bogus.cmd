./trace --backend=bogus ../../tests/08-lifecycle/threadsafe.scn
