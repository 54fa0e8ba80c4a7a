./trace --rules=miniloop ../../tests/08-lifecycle/ordering.scn
