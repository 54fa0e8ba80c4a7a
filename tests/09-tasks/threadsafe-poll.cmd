./trace --backend=poll ../../tests/09-tasks/threadsafe.scn
