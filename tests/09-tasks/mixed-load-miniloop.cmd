./trace --rules=miniloop ../../tests/09-tasks/mixed-load.scn
