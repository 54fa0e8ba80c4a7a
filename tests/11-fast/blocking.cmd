./trace ../../tests/conformance/scenarios/article004-9.5-blocking.scn
