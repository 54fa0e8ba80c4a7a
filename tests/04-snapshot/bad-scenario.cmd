./trace ../../tests/04-snapshot/bad-scenario.scn
