./trace --rules=miniloop ../../tests/09-tasks/ordering.scn
