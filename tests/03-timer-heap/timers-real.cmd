./demo_timers --real
