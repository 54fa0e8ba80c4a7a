./trace ../../tests/conformance/scenarios/escape.scn
