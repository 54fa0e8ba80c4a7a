/usr/bin/python3 -B tests/conformance/runs/policy.py
# twin: policy (make check: policy.out must equal the C demo's, tests/10-threads/policy.out)
