./trace ../../tests/conformance/scenarios/tasks-heartbeat.scn
