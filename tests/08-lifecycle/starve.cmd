./demo_starve
