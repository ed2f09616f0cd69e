#!/usr/bin/env python3
"""mpi_truth.py JOURNAL TIMER_DIR - hunch's estimate of the time MPI ranks
wait in MPI calls, against the truth: the calls timed in the same run by
a wrapper through MPI's profiling interface (tests/targets/
bn_mpi_timer.c: TIMER_DIR/rankN.waits, "ENTER_NS EXIT_NS" a line,
CLOCK_MONOTONIC, the clock of the journal's start_mono_ns).

For each msg_wait instance enabled on all the code of a rank's process
or of its main thread, one line:

    rank R process|thread EST TRUTH VERDICT

EST: the instance's mean value over its samples (seconds per second);
TRUTH: the same mean of the timed truth, each sample's value being the
rate over the SMOOTH_S seconds before it (consultant/src_live_setwall.c
gives each value so): the share of those seconds the rank spent inside
the timed calls; VERDICT: the search's conclusion for that node (true,
false, or none).  Then for the whole job ("job" for rank and focus), the sum of
the ranks' truths.
"""
import json
import re
import sys

SMOOTH_S = 2.0


def main():
    journal, tdir = sys.argv[1], sys.argv[2]
    recs = [json.loads(line) for line in open(journal)]
    t0 = recs[0]['start_mono_ns']
    rank_of = {}
    for r in recs:
        if (r.get('t') == 'resource' and r.get('kind') == 'process' and
                r.get('op') == 'add' and
                (r.get('name') or '').startswith('rank ')):
            rank_of[r['pid']] = int(r['name'].split()[1])
    enables = {r['req']: r['focus'] for r in recs
               if r.get('t') == 'enable' and r.get('metric') == 'msg_wait'
               and r['focus'][0] == '/Code'}
    inst = {r['req']: r['inst'] for r in recs
            if r.get('t') == 'reply' and r.get('status') == 0 and
            r['req'] in enables}
    series = {}
    for r in recs:
        if r.get('t') == 'sample':
            for i, v in zip(r['i'], r['v']):
                series.setdefault(i, []).append((r['t0'], r['t1'], v))
    verdicts = {}
    pat = re.compile(r'ExcessiveMessageWaitingTime tested (true|false) '
                     r'for </Code,(/Process[^,]*),')
    for r in recs:
        m = pat.search(r.get('text', '')) if r.get('t') == 'log' else None
        if m:
            verdicts[m.group(2)] = m.group(1)
    waits = {}
    for rk in set(rank_of.values()):
        try:
            with open('%s/rank%d.waits' % (tdir, rk)) as f:
                waits[rk] = [tuple(map(int, l.split())) for l in f]
        except OSError:
            waits[rk] = []

    def truth(rk, a, b):
        lo, hi = t0 + a * 1e9, t0 + b * 1e9
        inside = sum(max(0, min(e, hi) - max(s, lo)) for s, e in waits[rk])
        return inside / (hi - lo)

    for req in sorted(inst):
        s = series.get(inst[req])
        path = enables[req][1]
        parts = path.split('/')
        if not s:
            continue
        span = sum(y - x for x, y, v in s)
        est = sum((y - x) * v for x, y, v in s) / span

        def mean_truth(rks):
            return sum((y - x) * sum(truth(rk, y - SMOOTH_S, y) for rk in rks)
                       for x, y, v in s) / span
        if len(parts) == 2:
            tr = mean_truth(list(waits))
            print('job job %.3f %.3f %s' % (est, tr, verdicts.get(path, 'none')))
            continue
        pid = int(parts[2])
        if pid not in rank_of:
            continue
        if len(parts) == 3:
            focus = 'process'
        elif len(parts) == 4 and parts[3].split(':')[0] == parts[2]:
            focus = 'thread'
        else:
            continue
        print('%d %s %.3f %.3f %s' % (rank_of[pid], focus, est,
              mean_truth([rank_of[pid]]), verdicts.get(path, 'none')))


main()
