./trace ../../tests/09-tasks/ordering.scn
