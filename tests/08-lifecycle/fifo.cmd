./demo_fifo
