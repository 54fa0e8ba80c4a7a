./trace ../../tests/04-snapshot/nested-soon.scn
