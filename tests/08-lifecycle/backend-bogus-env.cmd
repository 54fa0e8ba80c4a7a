env LOOP_BACKEND=bogus ./trace ../../tests/08-lifecycle/threadsafe.scn
