/usr/bin/python3 -B tests/conformance/runs/executor.py
# twin: executor (make check: executor.out must equal the C demo's, tests/NN-slug/executor.out of the newest stage)
