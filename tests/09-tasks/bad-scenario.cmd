./trace ../../tests/09-tasks/bad-scenario.scn
