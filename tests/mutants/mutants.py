#!/usr/bin/python3
"""mutants.py -- read the mutant catalogues of tests/mutants/ (tests/mutate.sh).

A catalogue is tests/mutants/NN-slug.txt, the mutants of stage NN-slug:
blocks of "key: value" lines (id, file, why; optionally equivalent, sample),
then the exact original text after a line "--- original", its replacement
after "--- mutant", and a line "=== end".  A value goes on over the
following lines that start with a space.  Lines before the first block
that start with '#' are comments.

  mutants.py list CATALOGUE [--sample]   the ids (with --sample: those marked
                                         "sample: yes", which make check runs)
  mutants.py show CATALOGUE ID           id, file, why, equivalent, one per line
  mutants.py apply CATALOGUE ID DIR      apply it to DIR/FILE (DIR: a copy of
                                         the stage); the original text must
                                         occur exactly once, else exit 3
  mutants.py check CATALOGUE STAGEDIR    every original occurs exactly once
"""
import re
import sys


def parse(path):
    mutants, cur, part = [], None, None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if part in ('original', 'mutant'):
                if line.rstrip('\n') in ('--- mutant', '=== end'):
                    pass
                else:
                    cur[part].append(line)
                    continue
            text = line.rstrip('\n')
            if text == '--- original':
                part = 'original'
            elif text == '--- mutant':
                part = 'mutant'
            elif text == '=== end':
                for key in ('id', 'file', 'why'):
                    if key not in cur:
                        sys.exit(f'{path}:{n}: mutant without "{key}:"')
                cur['original'] = ''.join(cur['original'])
                cur['mutant'] = ''.join(cur['mutant'])
                mutants.append(cur)
                cur, part = None, None
            elif text.startswith('#') or not text.strip():
                continue
            elif re.match(r'[a-z]+:', text):
                key, value = text.split(':', 1)
                key = key.strip()
                if cur is None:
                    cur = {'original': [], 'mutant': [], 'line': n}
                if key in cur and key not in ('why', 'equivalent'):
                    sys.exit(f'{path}:{n}: "{key}:" twice in one mutant')
                if key in ('why', 'equivalent') and key in cur:
                    cur[key] += ' ' + value.strip()
                else:
                    cur[key] = value.strip()
            else:  # a continuation of the last key (why: spans lines)
                if cur is None or 'why' not in cur:
                    sys.exit(f'{path}:{n}: cannot read "{text}"')
                last = 'equivalent' if 'equivalent' in cur else 'why'
                cur[last] += ' ' + text.strip()
    if cur is not None:
        sys.exit(f'{path}: the last mutant has no "=== end"')
    ids = [m['id'] for m in mutants]
    for i in ids:
        if ids.count(i) > 1:
            sys.exit(f'{path}: id {i} twice')
    return mutants


def find(mutants, ident):
    for m in mutants:
        if m['id'] == ident:
            return m
    sys.exit(f'no mutant {ident}')


def count(m, stagedir):
    with open(f"{stagedir}/{m['file']}") as f:
        return f.read().count(m['original'])


def main(argv):
    cmd, path = argv[1], argv[2]
    mutants = parse(path)
    if cmd == 'list':
        sample = '--sample' in argv
        for m in mutants:
            if not sample or m.get('sample') == 'yes':
                print(m['id'])
    elif cmd == 'show':
        m = find(mutants, argv[3])
        for key in ('id', 'file', 'why', 'equivalent'):
            print(f"{key}: {m.get(key, '')}")
    elif cmd == 'apply':
        m, d = find(mutants, argv[3]), argv[4]
        k = count(m, d)
        if k != 1:
            print(f"{path}: mutant {m['id']}: its original text occurs {k} times in "
                  f"{m['file']}, not once: the catalogue is stale", file=sys.stderr)
            return 3
        with open(f"{d}/{m['file']}") as f:
            text = f.read()
        with open(f"{d}/{m['file']}", 'w') as f:
            f.write(text.replace(m['original'], m['mutant'], 1))
    elif cmd == 'check':
        bad = 0
        for m in mutants:
            k = count(m, argv[3])
            if k != 1 or m['original'] == m['mutant']:
                print(f"{path}:{m['line']}: {m['id']}: original occurs {k} times in "
                      f"{m['file']}" + (' (mutant = original)' if m['original'] == m['mutant'] else ''))
                bad = 1
        return bad
    else:
        sys.exit(__doc__)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
