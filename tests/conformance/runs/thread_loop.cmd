/usr/bin/python3 -B tests/conformance/runs/thread_loop.py
# twin: thread_loop (make check: thread_loop.out must equal the C demo's, tests/10-threads/thread_loop.out)
