./trace ../../tests/07-selector/bad-scenario.scn
