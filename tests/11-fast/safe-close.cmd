./demo_safe_close
