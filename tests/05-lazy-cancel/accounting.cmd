./demo_accounting
