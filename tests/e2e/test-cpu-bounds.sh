#!/bin/bash
# test-cpu-bounds.sh - CPU values that can be, on a program whose
# threads wait for a CPU unequally: the bundled demo (main computes in
# demo_hot_loop, 4 lock workers queue for the CPUs, 1 writer), under
# `hunch run --batch --time-limit 8 --kill-at-end`, while the test reads
# the demo's threads' own counters (/proc/PID/task/*/schedstat: ns on a
# CPU, ns waiting on a run queue) at the search's start and end.
# - every CPUbound and CPUdemand value (a mean of CPUs used, or used and
#   waited for) on one thread, or on the hot loop (main's alone), is at
#   most 1 CPU; on the program, at most the CPUs it may run on and at
#   most its threads;
# - the threads schedstat saw wanted (ran + waited) at most their number
#   of CPUs, and the CPUs hunch saw the program use are at most what
#   schedstat saw it use over the whole search, plus 0.3 (the search's
#   values are means over parts of it);
# - every finding's CPU value ("wants N CPUs", "uses N CPUs") is at most
#   its threads' number, and the main thread's CPU is one finding (the
#   hot loop's, or the function or process above it: not two).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XDG_STATE_HOME=$TMP/state
DEMO=$TARGETS_DIR/hunch-demo
NCPU=$(nproc)
EPS=0.000001   # float rounding: a mean of ratios of equal counters

# Sum of field $1 (1: run, 2: wait) over the threads' schedstat, in ns;
# the thread count on stderr's third line: "N RUN WAIT".
stat_of() {
	local run=0 wait=0 n=0 r w x
	for f in /proc/"$1"/task/*/schedstat; do
		read -r r w x < "$f" 2>/dev/null || continue
		run=$((run + r)); wait=$((wait + w)); n=$((n + 1))
	done
	echo "$n $run $wait"
}

"$HUNCH" run --batch --time-limit 8 --kill-at-end --no-journal \
	--report "$TMP/r.json" -- "$DEMO" --seconds 60 \
	> "$TMP/out" 2> "$TMP/err" &
hp=$!
# The demo's pid: hunch's "searching" line; then its 6 threads.
pid=
for _ in $(seq 600); do
	pid=$(sed -n 's/^hunch: searching .* (pid \([0-9]*\)).*$/\1/p' "$TMP/err")
	[ -n "$pid" ] && [ "$(ls /proc/"$pid"/task 2>/dev/null | wc -l)" -ge 6 ] && break
	sleep 0.05
done
tap_ok $([ -n "$pid" ]; echo $?) "hunch names the demo's pid ($pid)"
read -r n0 run0 wait0 <<< "$(stat_of "$pid")"
t0=$(date +%s.%N)
maxn=$n0
# Read until the demo is killed at the search's end: the last reading
# is the end's (within 50 ms).
while [ -d /proc/"$pid"/task ]; do
	read -r n run wait <<< "$(stat_of "$pid")"
	[ "$n" -gt 0 ] || break
	[ "$n" -gt "$maxn" ] && maxn=$n
	run1=$run; wait1=$wait; t1=$(date +%s.%N)
	sleep 0.05
done
wait "$hp"
rc=$?
tap_ok $([ "$rc" = 0 ] || [ "$rc" = 3 ]; echo $?) \
	"hunch run --batch on the demo exits 0 or 3 ($rc)"
tap_eq "$maxn" 6 "schedstat: the demo ran 6 threads"
used=$(echo "($run1 - $run0) / 1000000000 / ($t1 - $t0)" | bc -l)
wanted=$(echo "($run1 - $run0 + $wait1 - $wait0) / 1000000000 / ($t1 - $t0)" | bc -l)
tap_diag "schedstat over the search: $(printf %.2f "$used") CPUs used, $(printf %.2f "$wanted") wanted, by $maxn threads on $NCPU CPUs"
tap_ok $(echo "$used <= $NCPU + 0.05" | bc -l | grep -qx 1; echo $?) \
	"schedstat: the demo used at most its $NCPU CPUs"

r=$TMP/r.json
cpu='select(.hypothesis == "CPUbound" or .hypothesis == "CPUdemand") | select(.value != null)'
tap_ok $(jq -e "[.phases[].nodes[] | $cpu] | length >= 3" "$r" > /dev/null; echo $?) \
	"CPUbound and CPUdemand were measured (3 values or more)"
# one thread: a /Process/PID/TID focus, or demo_hot_loop (main's only)
over=$(jq -r --argjson e "$EPS" "[.phases[].nodes[] | $cpu
	| select((.focus[1] | test(\"^/Process/[0-9]+/[0-9]+\")) or
		 (.focus[0] | endswith(\"/demo_hot_loop\")))
	| select(.value > 1 + \$e) | \"\(.hypothesis) \(.value) \(.focus[0:2])\"] | join(\"; \")" "$r")
tap_eq "$over" "" "no CPU value of one thread (a thread's, the hot loop's) is over 1 CPU"
n1=$(jq "[.phases[].nodes[] | $cpu | select((.focus[1] | test(\"^/Process/[0-9]+/[0-9]+\")) or (.focus[0] | endswith(\"/demo_hot_loop\")))] | length" "$r")
tap_diag "$n1 CPU values of one thread checked"
most=$(( NCPU < maxn ? NCPU : maxn ))
over=$(jq -r --argjson m "$most" --argjson e "$EPS" "[.phases[].nodes[] | $cpu
	| select(.value > \$m + \$e) | \"\(.hypothesis) \(.value) \(.focus[0:2])\"] | join(\"; \")" "$r")
tap_eq "$over" "" "no CPU value is over $most CPUs (the demo's $maxn threads on $NCPU CPUs)"
# CPU used on the program, against schedstat's over the whole search
pv=$(jq -r --arg p "/Process/$pid" "[.phases[].nodes[] | select(.hypothesis == \"CPUbound\" and .value != null and .focus[0] == \"/Code\" and (.focus[1] == \"/Process\" or .focus[1] == \$p)) | .value] | max // 0" "$r")
tap_ok $(echo "$pv <= $used + 0.3" | bc -l | grep -qx 1; echo $?) \
	"CPUs used on the program: $(printf %.2f "$pv") by hunch, at most schedstat's $(printf %.2f "$used") + 0.3"

# Findings: each CPU value of a finding at most its threads
bad=$(jq -r '[.findings[] | select(.nthreads != null) |
	select((.text | [scan("(?:wants?|wanting|uses?|using) ([0-9.]+) CPUs")[0] | tonumber] | max // 0) > .nthreads + 0.005)
	| .text] | join("; ")' "$r")
tap_eq "$bad" "" "no finding says its threads use or want more CPUs than they are"
# the main thread's CPU, one finding: CPU findings on the hot chain
# (main .. demo_hot_loop), on main's thread or the whole program
hot=$(jq -r '[.findings[] | select(.hypothesis == "CPUbound" or .hypothesis == "CPUdemand")
	| select((.where.function // "" | test("/(main|demo_run|demo_step|demo_transform|demo_hot_loop)$"))
		 or (.where.function == null and (.nthreads == null or .nthreads == 1 or (.where.threads | test("^/Process/[0-9]+$")))))
	| .text] | length' "$r")
tap_eq "$hot" 1 "the main thread's CPU is one finding"
jq -r '.findings[] | "\(.rank). \(.text)"' "$r" |
	while read -r l; do tap_diag "finding $l"; done
tap_done
