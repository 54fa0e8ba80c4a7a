./demo_states
