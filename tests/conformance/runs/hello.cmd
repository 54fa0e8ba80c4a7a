/usr/bin/python3 -B tests/conformance/runs/hello.py
# twin: hello (make check: hello.out must equal the C demo's, tests/NN-slug/hello.out of the newest stage)
