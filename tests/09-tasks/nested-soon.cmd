./trace ../../tests/09-tasks/nested-soon.scn
