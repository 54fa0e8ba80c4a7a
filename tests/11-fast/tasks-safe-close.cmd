./trace ../../tests/conformance/scenarios/tasks-safe-close.scn
