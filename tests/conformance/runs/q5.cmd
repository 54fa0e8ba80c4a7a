/usr/bin/python3 -B tests/conformance/runs/q5.py
# twin: q5 (make check: q5.out must equal the C demo's, tests/NN-slug/q5.out of the newest stage)
