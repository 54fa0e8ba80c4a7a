./demo_policy
