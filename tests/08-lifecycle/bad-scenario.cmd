./trace ../../tests/08-lifecycle/bad-scenario.scn
