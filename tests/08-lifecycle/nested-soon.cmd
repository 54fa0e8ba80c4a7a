./trace ../../tests/08-lifecycle/nested-soon.scn
