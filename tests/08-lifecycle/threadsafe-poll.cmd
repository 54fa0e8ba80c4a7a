./trace --backend=poll ../../tests/08-lifecycle/threadsafe.scn
