./demo_never_retrieved
