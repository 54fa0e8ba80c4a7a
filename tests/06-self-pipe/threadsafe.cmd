./trace ../../tests/06-self-pipe/threadsafe.scn
