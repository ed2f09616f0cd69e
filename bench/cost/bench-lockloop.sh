#!/bin/bash
# bench-lockloop.sh - the observed cost against the real slowdown on the
# worst case for entry instrumentation: lockloop's tight
# pthread_mutex_lock/unlock loop (lockloop.c).
#
#   HUNCH=build/hunch HUNCH_BUILD_ROOT=build bench/cost/bench-lockloop.sh [SECONDS] [WORK]
#
# The baseline is the loop's own rate (rounds per CPU second) in a direct
# run of the same length, made just before the run under hunch.  Under
# `hunch run --batch --set costLimit=1` (so that the sync experiments,
# predicted over the default limit, run), each second of the search gives
# the mean observed cost (the journal's cost records) and the measured
# slowdown (baseline rate / the loop's rate in that second - 1).  It
# prints both per second and the median of their ratio (goal: 0.7-1.3,
# or up to 2 on the safe side).
set -u
SECONDS_=${1:-10}
WORK=${2:-96}
LOOP=$HUNCH_BUILD_ROOT/bench/cost/lockloop
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

"$LOOP" "$SECONDS_" "$WORK" > "$TMP/direct.out"
# Exit status 3 is an incomplete search (a hypothesis the program's end
# left untested): the run and its journal are whole.
"$HUNCH" run --batch --journal "$TMP/j.jsonl" --set costLimit=1 -- \
	"$LOOP" "$SECONDS_" "$WORK" > "$TMP/hunch.out" 2> "$TMP/hunch.err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] ||
	{ echo "hunch run failed ($rc):"; cat "$TMP/hunch.err"; exit 1; }

python3 - "$TMP" <<'PY'
import json, statistics, sys
tmp = sys.argv[1]

def rates(path):
    out = []
    for line in open(path):
        f = line.split()
        if len(f) == 2 and f[0][0].isdigit():
            out.append((float(f[0]), float(f[1])))
    return out

base = statistics.median(r for _, r in rates(tmp + "/direct.out"))
loop = rates(tmp + "/hunch.out")
cost = [json.loads(l) for l in open(tmp + "/j.jsonl") if '"t":"cost"' in l]
print("direct: %.1f M rounds per CPU second" % (base / 1e6))
print("| second | observed | measured | ratio |")
print("|---:|---:|---:|---:|")
ratios = []
for t in range(int(max(t for t, _ in loop)) + 1):
    c = [x["observed"] for x in cost if t <= x["ts"] < t + 1]
    r = [v for s, v in loop if t <= s < t + 1]
    if not c or not r:
        continue
    obs, meas = statistics.mean(c), base / statistics.mean(r) - 1
    ratio = obs / meas if meas > 0.02 else None
    if ratio is not None:
        ratios.append(ratio)
    print("| %d | %.1f%% | %.1f%% | %s |" % (t, 100 * obs, 100 * meas,
          "%.2f" % ratio if ratio is not None else "-"))
print("median ratio: %s" % ("%.2f" % statistics.median(ratios)
                            if ratios else "-"))
PY
