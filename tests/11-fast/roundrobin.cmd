./demo_roundrobin
