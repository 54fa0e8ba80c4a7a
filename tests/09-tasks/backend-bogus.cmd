./trace --backend=bogus ../../tests/09-tasks/threadsafe.scn
