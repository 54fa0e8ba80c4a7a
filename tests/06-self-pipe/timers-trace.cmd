./trace ../../tests/06-self-pipe/timers.scn
