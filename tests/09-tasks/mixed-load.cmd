./trace ../../tests/09-tasks/mixed-load.scn
