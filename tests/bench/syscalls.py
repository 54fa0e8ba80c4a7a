"""syscalls.py -- what each loop asks of the kernel per ping-pong round trip.

Article 004's answer to 题目2 says uvloop is faster because it makes fewer
system calls.  This counts them: strace -f -c runs each contender's pingpong
(tests/bench/BENCH.md: one byte back and forth on a socketpair, both ends in
the loop) twice, with N and 2N round trips, and prints the difference per
round trip, so that start-up (Python's imports, the loop's creation) cancels
out.  `make bench` writes it to book/data/syscalls.txt.

usage: syscalls.py --bin DIR [N]     (DIR: where tests/bench.sh put
                                      loop_bench-NN and peer_uv; N: 2000)
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.environ.get('PYTHON', '/usr/bin/python3')


def counts(cmd, env=None):
    """{syscall: calls} of one run of cmd under strace -f -c."""
    with tempfile.NamedTemporaryFile('r', suffix='.strace') as out:
        subprocess.run(['strace', '-f', '-qq', '-c', '-o', out.name] + cmd, check=True,
                       stdout=subprocess.DEVNULL, env=dict(os.environ, **(env or {})))
        calls = {}
        for line in out.read().splitlines():
            f = line.split()
            # % time, seconds, usecs/call, calls, [errors,] syscall
            if len(f) >= 5 and f[3].isdigit() and f[-1] != 'total':
                calls[f[-1]] = int(f[3])
        return calls


def main(argv):
    if len(argv) not in (3, 4) or argv[1] != '--bin':
        print(__doc__.split('usage: ')[1].strip(), file=sys.stderr)
        return 2
    bindir, n = argv[2], int(argv[3]) if len(argv) == 4 else 2000
    newest = sorted(f for f in os.listdir(bindir) if f.startswith('loop_bench-'))[-1]
    contenders = [
        (f'stage {newest[-2:]}', [os.path.join(bindir, newest), 'pingpong'],
         {'LOOP_BACKEND': 'epoll'}),
        ('libuv', [os.path.join(bindir, 'peer_uv'), 'pingpong'], None),
        ('asyncio', [PYTHON, os.path.join(HERE, 'loops_peer.py'), 'asyncio', 'pingpong'], None),
        ('uvloop', [PYTHON, os.path.join(HERE, 'loops_peer.py'), 'uvloop', 'pingpong'], None),
    ]
    print(f'# system calls per one-byte round trip (strace -f -c of pingpong with {n} and '
          f'{2 * n} round trips, the difference / {n})')
    rows = []
    for label, cmd, env in contenders:
        a, b = counts(cmd + [str(n)], env), counts(cmd + [str(2 * n)], env)
        per = {s: (b.get(s, 0) - a.get(s, 0)) / n for s in set(a) | set(b)}
        per = {s: v for s, v in per.items() if abs(v) >= 0.005}
        rows.append((label, per))
    for label, per in rows:
        calls = '  '.join(f'{s} {v:.2f}' for s, v in sorted(per.items()))
        print(f'{label:<9} total {sum(per.values()):.2f}:  {calls}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
