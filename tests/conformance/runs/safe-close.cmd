/usr/bin/python3 -B tests/conformance/runs/safe-close.py
# twin: safe-close (make check: safe-close.out must equal the C demo's, tests/NN-slug/safe-close.out of the newest stage)
