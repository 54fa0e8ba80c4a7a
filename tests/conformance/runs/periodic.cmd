/usr/bin/python3 -B tests/conformance/runs/periodic.py
# twin: periodic (make check: periodic.out must equal the C demo's, tests/NN-slug/periodic.out of the newest stage)
