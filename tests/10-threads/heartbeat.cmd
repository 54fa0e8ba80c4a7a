./demo_heartbeat
