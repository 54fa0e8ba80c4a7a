./trace --rules=miniloop ../../tests/08-lifecycle/mixed-load.scn
