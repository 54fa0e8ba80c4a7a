env LOOP_BACKEND=bogus ./trace ../../tests/11-fast/threadsafe.scn
