/usr/bin/python3 -B tests/conformance/runs/q3.py
# twin: q3 (make check: q3.out must equal the C demo's, tests/NN-slug/q3.out of the newest stage)
