./trace ../../tests/11-fast/bad-scenario.scn
