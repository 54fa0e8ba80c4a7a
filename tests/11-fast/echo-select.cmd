./demo_echo --backend=select
