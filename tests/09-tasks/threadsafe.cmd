./trace ../../tests/09-tasks/threadsafe.scn
