./demo_limits
