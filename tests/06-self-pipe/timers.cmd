./demo_timers
