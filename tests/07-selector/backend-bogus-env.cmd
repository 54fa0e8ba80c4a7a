env LOOP_BACKEND=bogus ./trace ../../tests/07-selector/threadsafe.scn
