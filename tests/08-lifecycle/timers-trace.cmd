./trace ../../tests/08-lifecycle/timers.scn
