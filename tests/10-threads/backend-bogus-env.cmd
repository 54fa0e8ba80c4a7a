env LOOP_BACKEND=bogus ./trace ../../tests/10-threads/threadsafe.scn
