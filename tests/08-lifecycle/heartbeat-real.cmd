./demo_heartbeat --real
