#!/bin/bash
# bench-cost.sh [RUNS] [PROGRAM...] - is hunch's observed cost the real
# slowdown?  Each program does a fixed amount of work, RUNS times (3)
# directly and RUNS times under `hunch run --batch` with the search
# running (default cost limit), interleaved.  Measured:
#   - the program's own CPU time (user + system, from getrusage at its
#     exit: libcpu_at_exit.so, LD_PRELOAD'ed; hunch's CPU is not in it,
#     the instrumentation's is); slowdown = median(hunch) / median(direct)
#     - 1;
#   - what hunch observed in the same runs: the journal's cost records
#     (one per tick, a slowdown) turned into the share of the program's
#     time that was instrumentation over the run (the search's ticks,
#     weighted by their length, over the program's wall time: the search
#     stops when it has nothing left to test and the program runs on
#     uninstrumented), back into a slowdown; the median over the runs;
#     and the report's peak.
# Prints a markdown table, ratio = observed / measured.  COST_LIMIT=X
# runs the search with --set costLimit=X (the default limit, 5%, keeps
# the instrumentation so cheap that the slowdown is lost in the noise;
# 0.5 lets the expensive experiments run, and shows whether their cost
# is observed as it is).  HUNCH_BASE=other/hunch adds, interleaved with
# the same runs, RUNS runs under that build (before/after a change, on
# the same machine load), printed as a second table.  Needs HUNCH,
# HUNCH_BUILD_ROOT (meson benchmark 'cost' sets them).
set -u
RUNS=${1:-3}
shift || true
PROGS=("$@")
[ ${#PROGS[@]} -eq 0 ] && PROGS=(sqlite3 gzip zstd python3.11 allocstorm)
CAE=$HUNCH_BUILD_ROOT/bench/cost/libcpu_at_exit.so
STORM=$HUNCH_BUILD_ROOT/tests/e2e/allocstorm
TMP=$(mktemp -d -p "${HUNCH_BUILD_ROOT:-.}" bench-cost.XXXXXX)
[ -n "${COST_BENCH_KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT

# Inputs: a query over 12 million generated rows; 30 MB of the shared
# libraries on this machine (gzip, zstd).
cat > "$TMP/q.sql" <<'SQL'
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<12000000)
SELECT count(*), sum(length(printf('%d-%s', x, hex(x*7)))) FROM c WHERE x % 3 <> 1;
SQL
cat /usr/lib/x86_64-linux-gnu/lib*.so* 2>/dev/null | head -c 30000000 > "$TMP/data"

# run PROG MODE N: one run, its CPU line appended to $TMP/PROG.MODE.
run() {
	local p=$1 mode=$2 n=$3 pre=() h=$HUNCH
	[ "$mode" = base ] && h=$HUNCH_BASE
	[ "$mode" != direct ] && pre=("$h" run --batch --report \
		"$TMP/$p.$mode.r$n.json" --journal "$TMP/$p.$mode.j$n.jsonl"
		${COST_LIMIT:+--set costLimit=$COST_LIMIT} --)
	export COST_BENCH_CPU_FILE=$TMP/$p.$mode.cpu
	case $p in
	sqlite3) LD_PRELOAD=$CAE "${pre[@]}" /usr/bin/sqlite3 :memory: \
			< "$TMP/q.sql" ;;
	gzip) LD_PRELOAD=$CAE "${pre[@]}" /usr/bin/gzip -9 -c "$TMP/data" ;;
	zstd) LD_PRELOAD=$CAE "${pre[@]}" /usr/bin/zstd -19 -q -c "$TMP/data" ;;
	python3.11) LD_PRELOAD=$CAE "${pre[@]}" /usr/bin/python3.11 -c \
		'for _ in range(200000): sum(i*i for i in range(1000))' ;;
	allocstorm) LD_PRELOAD=$CAE "${pre[@]}" "$STORM" 0 30000000 ;;
	esac > /dev/null 2> "$TMP/$p.$mode.err$n"
}

for p in "${PROGS[@]}"; do
	for n in $(seq "$RUNS"); do
		run "$p" direct "$n"
		run "$p" hunch "$n"
		[ -n "${HUNCH_BASE:-}" ] && run "$p" base "$n"
	done
done

python3 - "$TMP" "$RUNS" "${HUNCH_BASE:+base}" "${PROGS[@]}" <<'PY'
import json, statistics, sys
tmp, runs, base, progs = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    sys.argv[4:]

def cpu_lines(path, prog):
    """(cpu, wall) of the program's own lines (not hunch's, nor of a
    shell or helper that inherited the variable)."""
    out = []
    for line in open(path):
        comm, cpu, wall = line.split()
        if comm == prog:
            out.append((float(cpu), float(wall)))
    return out

def observed(journal, wall):
    """The run's slowdown as the cost records say, and their count."""
    cs = [(d["ts"], d["observed"]) for d in map(json.loads, open(journal))
          if d["t"] == "cost"]
    over = sum((b - a) * o / (1 + o) for (a, o), (b, _) in zip(cs, cs[1:]))
    share = over / wall
    return share / (1 - share), len(cs)

def table(mode):
    print("| program | direct CPU s | with hunch CPU s | measured slowdown "
          "| observed slowdown | ratio | peak observed | direct spread |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for p in progs:
        d = cpu_lines(f"{tmp}/{p}.direct.cpu", p)
        h = cpu_lines(f"{tmp}/{p}.{mode}.cpu", p)
        if len(d) != runs or len(h) != runs:
            print(f"| {p} | runs missing: {len(d)} direct, {len(h)} {mode} |")
            continue
        obs, peaks = [], []
        for n in range(1, runs + 1):
            o, _ = observed(f"{tmp}/{p}.{mode}.j{n}.jsonl", h[n - 1][1])
            obs.append(o)
            peaks.append(json.load(open(f"{tmp}/{p}.{mode}.r{n}.json"))
                         ["cost"]["peak_observed"])
        md = statistics.median(c for c, _ in d)
        mh = statistics.median(c for c, _ in h)
        meas = mh / md - 1
        ob = statistics.median(obs)
        spread = max(c for c, _ in d) / min(c for c, _ in d) - 1
        ratio = f"{ob / meas:.2f}" if meas > 0.005 else "-"
        print(f"| {p} | {md:.2f} | {mh:.2f} | {100 * meas:.1f}% | "
              f"{100 * ob:.1f}% | {ratio} | {100 * max(peaks):.1f}% | "
              f"{100 * spread:.1f}% |")

table("hunch")
if base:
    print()
    print("Baseline build (HUNCH_BASE), the same direct runs:")
    print()
    table("base")
PY
