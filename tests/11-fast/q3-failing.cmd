./trace ../../tests/conformance/scenarios/article004-q3-failing.scn
