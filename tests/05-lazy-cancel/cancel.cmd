./demo_cancel
