./trace ../../tests/conformance/scenarios/signal-until.scn
