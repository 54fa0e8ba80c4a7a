./trace ../../tests/09-tasks/timers.scn
