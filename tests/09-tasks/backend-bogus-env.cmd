env LOOP_BACKEND=bogus ./trace ../../tests/09-tasks/threadsafe.scn
