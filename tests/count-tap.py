#!/usr/bin/env python3
"""Count real test cases in meson's testlog.json.

Every TAP line ("ok N" / "not ok N") is one test case.  A test program
that failed without reporting a failing case (a crash, a timeout, a bad
plan) counts as one more failure, so nothing is hidden.  A non-TAP test
counts as one case.  Prints each failing test's diagnostics (its last
DIAG_LINES "#" and "not ok" lines: a CI log keeps only this output, and
a failure seen once must be readable there), the failing cases, then
"N passed, N failed".
"""
import json
import re
import sys

TAP = re.compile(r'^(not )?ok \d+\b(.*)$')
GOOD = {'OK', 'EXPECTEDFAIL', 'SKIP'}
DIAG_LINES = 40


def main(path):
    passed = failed = 0
    failures = []
    diags = []
    try:
        f = open(path)
    except OSError as e:
        print(f'count-tap: no test log at {path} ({e.strerror}): did meson test run?')
        print('0 passed, 1 failed')
        return 1
    with f:
        for line in f:
            if not line.strip():
                continue
            t = json.loads(line)
            name, result = t.get('name', '?'), t.get('result', '?')
            p = fl = 0
            lines = (t.get('stdout') or '').splitlines()
            for out in lines:
                m = TAP.match(out)
                if not m:
                    continue
                if m.group(1):
                    fl += 1
                    failures.append(f'{name}: not ok{m.group(2)}')
                else:
                    p += 1
            if p + fl == 0:
                if result in GOOD:
                    p = 1
                else:
                    fl = 1
                    failures.append(f'{name}: {result} (no test output)')
            elif result not in GOOD and fl == 0:
                fl = 1
                failures.append(f'{name}: {result} after {p} passing cases')
            passed += p
            failed += fl
            if fl:
                diags.append((name, [x for x in lines if x.startswith('#')
                                     or x.startswith('not ok')]))
    for name, lines in diags:
        print(f'--- {name}: its last diagnostics')
        for x in lines[-DIAG_LINES:]:
            print('  |', x)
    for fail in failures:
        print('FAILED', fail)
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
