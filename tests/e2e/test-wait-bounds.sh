#!/bin/bash
# test-wait-bounds.sh - blocking and waiting values that can be, on the
# bundled demo (main computes, 4 lock workers wait for demo_lock, 1
# writer blocks in 1-byte write()s: the only thread that does I/O) under
# `hunch run --batch --time-limit 10 --kill-at-end`, read from its journal
# (every sample of the wall timers io_wait and sync_wait: its focus, its
# interval and its rate) and its report:
# - no io_wait interval, on any focus, counts more blocking than the one
#   writer thread can: its seconds blocked at most its length, + 2 ms
#   (the sampler reads a thread's timer a little before the interval's
#   end is taken);
# - no sync_wait interval counts more than its length on one thread
#   (/Process/PID/TID), nor more than the 4 workers' on any focus;
# - the report's ExcessiveIOBlockingTime values (means over their
#   intervals) are at most 1 s/s, its ExcessiveSyncWaitingTime values at
#   most 1 on one thread and 4 anywhere, and the findings' "N s per
#   second blocked in I/O" at most their threads.
# A thread descheduled inside a timer's update made a tick read 0 and the
# next twice its value (1.9 s/s on the writer); an instance sharing a
# timer started from the last tick's reading, not the enable's (up to a
# tick's time more in its first interval).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XDG_STATE_HOME=$TMP/state
DEMO=$TARGETS_DIR/hunch-demo
SKEW=0.002   # s: a timer read before its interval's end was taken
EPS=0.000001

# 10 s: an I/O wait estimated from stack samples (the writer's write()s
# too frequent to time under the limit) has no value for its first 2 s,
# and 8 s left 19 io_wait intervals where the checks below want 20.
"$HUNCH" run --batch --time-limit 10 --kill-at-end --journal "$TMP/j.jsonl" \
	--report "$TMP/r.json" -- "$DEMO" --seconds 60 --threads 4 \
	> "$TMP/out" 2> "$TMP/err"
rc=$?
tap_ok $([ "$rc" = 0 ] || [ "$rc" = 3 ]; echo $?) \
	"hunch run --batch on the demo exits 0 or 3 ($rc)"
j=$TMP/j.jsonl
threads=$(jq -s '[.[] | select(.t == "resource" and .op == "add" and .kind == "thread")] | length' "$j")
tap_eq "$threads" 6 "the journal names the demo's 6 threads"

# Every sample of io_wait and sync_wait: metric, focus, length (s), rate.
jq -r -s '
  (map(select(.t == "enable")) | map({key: (.req | tostring),
	value: {m: .metric, f: (.focus | join(","))}}) | from_entries) as $en
  | (map(select(.t == "reply" and .status == 0)) | map({key: (.inst | tostring),
	value: $en[.req | tostring]}) | from_entries) as $in
  | .[] | select(.t == "sample") | . as $s | range(0; .i | length) as $k
  | $in[$s.i[$k] | tostring] as $e
  | select($e != null and ($e.m == "io_wait" or $e.m == "sync_wait"))
  | [$e.m, $e.f, ($s.t1 - $s.t0), $s.v[$k]] | @tsv' "$j" > "$TMP/samples"
nio=$(awk -F'\t' '$1 == "io_wait"' "$TMP/samples" | wc -l)
nsync=$(awk -F'\t' '$1 == "sync_wait"' "$TMP/samples" | wc -l)
nthr=$(awk -F'\t' '$1 == "sync_wait" && $2 ~ /,\/Process\/[0-9]+\/[0-9]+/' "$TMP/samples" | wc -l)
tap_diag "$nio io_wait and $nsync sync_wait intervals ($nthr on one thread)"
tap_ok $([ "$nio" -ge 20 ]; echo $?) "io_wait was sampled (20 intervals or more: $nio)"
tap_ok $([ "$nsync" -ge 20 ]; echo $?) "sync_wait was sampled (20 intervals or more: $nsync)"

# over MOST METRIC [FOCUS-REGEX]: the intervals counting more than MOST
# threads' worth of their length, + SKEW per thread.
over() {
	awk -F'\t' -v most="$1" -v m="$2" -v re="${3:-.}" -v skew="$SKEW" '
		$1 == m && $2 ~ re && $4 * $3 > most * ($3 + skew) {
			printf "%s %.4f s/s over %.3f s on %s\n", $1, $4, $3, $2 }' \
		"$TMP/samples" | head -5
}
tap_eq "$(over 1 io_wait)" "" "no io_wait interval blocks more than the writer's one thread can"
tap_eq "$(over 1 sync_wait ',/Process/[0-9]+/[0-9]+')" "" \
	"no sync_wait interval on one thread waits more than its length"
tap_eq "$(over 4 sync_wait)" "" "no sync_wait interval waits more than the 4 workers can"

r=$TMP/r.json
node() {  # node HYPOTHESIS MOST [FOCUS1-REGEX]: values over MOST
	jq -r --arg h "$1" --argjson m "$2" --arg re "${3:-.}" --argjson e "$EPS" \
		'[.phases[].nodes[] | select(.hypothesis == $h and .value != null)
		  | select(.focus[1] | test($re)) | select(.value > $m + $e)
		  | "\(.value) \(.focus)"] | join("; ")' "$r"
}
nio=$(jq '[.phases[].nodes[] | select(.hypothesis == "ExcessiveIOBlockingTime" and .value != null)] | length' "$r")
tap_ok $([ "$nio" -ge 2 ]; echo $?) "ExcessiveIOBlockingTime was judged ($nio values)"
tap_eq "$(node ExcessiveIOBlockingTime 1)" "" \
	"no ExcessiveIOBlockingTime value is over 1 s/s (one thread does I/O)"
tap_eq "$(node ExcessiveSyncWaitingTime 1 '^/Process/[0-9]+/[0-9]+')" "" \
	"no ExcessiveSyncWaitingTime value on one thread is over 1 s/s"
tap_eq "$(node ExcessiveSyncWaitingTime 4)" "" \
	"no ExcessiveSyncWaitingTime value is over 4 s/s (4 workers wait)"
bad=$(jq -r '[.findings[] | select(.text | test("s per second blocked in I/O"))
	| select((.text | capture("(?<s>[0-9.]+) s per second blocked").s | tonumber)
		 > (.nthreads // 1) + 0.005) | .text] | join("; ")' "$r")
tap_eq "$bad" "" "no finding blocks its threads in I/O more than 1 s per second each"
jq -r '.findings[] | "\(.rank). \(.text)"' "$r" |
	while read -r l; do tap_diag "finding $l"; done
tap_done
