./demo_periodic
