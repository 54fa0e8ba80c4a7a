./demo_backends
