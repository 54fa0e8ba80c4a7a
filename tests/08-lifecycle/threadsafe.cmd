./trace ../../tests/08-lifecycle/threadsafe.scn
