./trace ../../tests/conformance/scenarios/tasks-q5-stop-await.scn
