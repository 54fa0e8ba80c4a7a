./trace ../../tests/10-threads/nested-soon.scn
