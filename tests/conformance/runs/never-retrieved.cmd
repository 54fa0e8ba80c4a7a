/usr/bin/python3 -B tests/conformance/runs/never-retrieved.py
# twin: never-retrieved (make check: never-retrieved.out must equal the C demo's, tests/NN-slug/never-retrieved.out of the newest stage)
