./trace ../../tests/07-selector/nested-soon.scn
