./trace ../../tests/06-self-pipe/bad-scenario.scn
