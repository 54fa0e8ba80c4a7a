./trace ../../tests/05-lazy-cancel/nested-soon.scn
