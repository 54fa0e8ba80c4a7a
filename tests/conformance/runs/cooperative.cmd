/usr/bin/python3 -B tests/conformance/runs/cooperative.py
# twin: cooperative (make check: cooperative.out must equal the C demo's, tests/NN-slug/cooperative.out of the newest stage)
