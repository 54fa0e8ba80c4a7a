./trace ../../tests/conformance/scenarios/lifecycle.scn
