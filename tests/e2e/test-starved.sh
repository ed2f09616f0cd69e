#!/bin/bash
# test-starved.sh - CPU starvation is its own finding, and CPU used is
# CPUs used: `hunch run --batch` on spin1 (one thread, always runnable)
# with three busy loops of the test beside it on this machine's CPUs.
# - CPUstarved is concluded true on the whole program: spin1 waits for a
#   CPU most of the time (its run-queue wait, schedstat's second field,
#   over PC_CPUStarvedThreshold);
# - no CPUbound value (a mean of CPUs used) is more than the machine's
#   CPUs, nor more than spin1's one thread can use (1);
# - under CPUstarved, CPUdemand (CPU used or waited for) finds the code
#   that wants the CPU: spin1's spin_work;
# - the journal replays to the same text report, byte for byte (the new
#   metric's samples are journaled like any other).
# The negative (a program alone is not starved) is checked on a program
# that sleeps, /bin/sleep: the machine running the suite may be loaded
# by other tests, so a busy program alone may well be starved by them,
# but a sleeping one wakes a few times and waits well under a
# millisecond each time, whatever the load.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
LOOPS=()
cleanup() {
	for p in "${LOOPS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
export XDG_STATE_HOME=$TMP/state
SPIN1=${1:?usage: test-starved.sh SPIN1}
NCPU=$(nproc)

# node NAME HYP CODE PROC: "truth value" of that node (/SyncObject and
# /Files at their roots), or "none".
node() {
	jq -r --arg h "$2" --arg c "$3" --arg p "$4" '
		[.phases[0].nodes[] | select(.hypothesis == $h
			and .focus[0] == $c and .focus[1] == $p
			and .focus[2] == "/SyncObject" and .focus[3] == "/Files")]
		| if length == 0 then "none" else .[0] | "\(.truth) \(.value)" end
	' "$1"
}

for i in 1 2 3; do
	( while :; do :; done ) &
	LOOPS+=($!)
done
# spin1 spins until its stdin closes: a pipe from a sleep that outlives
# the search (--kill-at-end ends spin1), killed as soon as it is over.
exec 3< <(exec sleep 120)
LOOPS+=($!)
"$HUNCH" run --batch --time-limit 8 --kill-at-end \
	--report "$TMP/spin.json" --journal "$TMP/spin.jsonl" \
	-- "$SPIN1" <&3 > "$TMP/spin.out" 2> "$TMP/spin.err"
rc=$?
exec 3<&-
tap_ok $([ "$rc" = 0 ] || [ "$rc" = 3 ]; echo $?) \
	"spin1 beside 3 busy loops: hunch run --batch exits 0 or 3 ($rc)"
for p in "${LOOPS[@]}"; do kill "$p" 2>/dev/null; done
LOOPS=()

r=$TMP/spin.json
v=$(node "$r" CPUstarved /Code /Process)
tap_eq "${v%% *}" true "CPUstarved true on the whole program (run-queue wait ${v#* } threads)"
pid=$(jq -r .target.pid "$r")
v=$(node "$r" CPUstarved /Code "/Process/$pid")
tap_eq "$v" none "CPUstarved is not refined down the where axis (whyOnly)"
tap_eq "$(jq -r '.bottlenecks[] | .chain[0]' "$r" | grep -c '^CPUstarved<')" \
	"$(jq -r '.bottlenecks[] | select(.hypothesis == "CPUstarved" or .hypothesis == "CPUdemand") | .hypothesis' "$r" | wc -l)" \
	"every CPUstarved or CPUdemand bottleneck descends from CPUstarved on the program"
over=$(jq -r --argjson n "$NCPU" '[.phases[].nodes[]
	| select(.hypothesis == "CPUbound" and .value != null and .value > ([$n, 1] | min))]
	| length' "$r")
tap_eq "$over" 0 "no CPUbound value is over the CPUs spin1's one thread can use (1 of $NCPU)"
tap_eq "$(jq -r '[.phases[].nodes[] | select(.hypothesis == "CPUbound" and .value != null)] | length > 0' "$r")" \
	true "... and CPUbound was measured"
# One thread can want at most one CPU: used plus waited for on a run
# queue, over the same interval (5% for the two counters' timing).
dover=$(jq -r '[.phases[].nodes[] | select(.hypothesis == "CPUdemand" and .value != null and .value > 1.05) | .value] | map(tostring) | join(" ")' "$r")
tap_eq "$dover" "" "no CPUdemand value is over 1.05 CPUs for spin1's one thread"
v=$(jq -r '[.bottlenecks[] | select(.hypothesis == "CPUdemand") | .focus[0]]
	| index("/Code/spin1/spin1.c/spin_work") != null' "$r")
tap_eq "$v" true "CPUdemand (used or waited for) true at spin1's hot function, spin_work"
jq -r '.bottlenecks[] | "\(.hypothesis) \(.focus[0]) \(.focus[1]) \(.value)"' "$r" |
	while read -r l; do tap_diag "$l"; done

sed -n '/^hunch report: /,$p' "$TMP/spin.out" > "$TMP/live.txt"
"$HUNCH" replay --batch "$TMP/spin.jsonl" > "$TMP/replay.txt" 2> "$TMP/replay.err"
tap_eq $? "$rc" "hunch replay --batch exits as the live search did"
tap_ok $(cmp -s "$TMP/live.txt" "$TMP/replay.txt"; echo $?) \
	"the replayed text report is byte-identical to the live one"
diff "$TMP/live.txt" "$TMP/replay.txt" | head -10 |
	while read -r l; do tap_diag "$l"; done

# Alone and asleep: not starved, even on a loaded machine.
"$HUNCH" run --batch --time-limit 6 --kill-at-end --no-journal \
	--report "$TMP/sleep.json" -- /bin/sleep 30 > "$TMP/sleep.out" 2> "$TMP/sleep.err"
v=$(node "$TMP/sleep.json" CPUstarved /Code /Process)
tap_eq "${v%% *}" false "a sleeping program alone: CPUstarved false (wait ${v#* } threads)"
tap_done
