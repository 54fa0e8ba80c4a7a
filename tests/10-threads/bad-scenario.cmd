./trace ../../tests/10-threads/bad-scenario.scn
