/usr/bin/python3 -B tests/conformance/runs/coro.py
# twin: coro (make check: coro.out must equal the C demo's, tests/NN-slug/coro.out of the newest stage)
