./trace ../../tests/07-selector/threadsafe.scn
