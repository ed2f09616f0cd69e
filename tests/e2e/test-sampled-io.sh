#!/bin/bash
# test-sampled-io.sh - I/O calls too frequent to time are measured from
# the stack samples (consultant/src_live_setwall.c on the program itself,
# src_live_ops.c use_wall_samples): bn_smallwrites makes 1-byte write()s
# as fast as the kernel takes them (3 million a second on a 6.18
# kernel), and a timer pair at each write() is predicted far over a
# cost limit of 1%, so ExcessiveIOBlockingTime was "not tested" and the
# search incomplete.  Estimated instead from the CPU samples inside
# write() and the time off a CPU there:
# - the search completes (exit 0) and the I/O hypothesis is true on the
#   whole program, its enable answered "sampled" in the journal;
# - the search reaches write() in thread main: a bottleneck marked
#   sampled, its value the thread's time in write(): 0.5 to 1.05 s per
#   second (the program does nothing else);
# - the text report says it was estimated from stack samples;
# - the program's own output is whole;
# - the journal replays to the same text report.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XDG_STATE_HOME=$TMP/state
SW=${1:?usage: test-sampled-io.sh BN_SMALLWRITES}

"$HUNCH" run --batch --set costLimit=0.01 --report "$TMP/r.json" \
	--journal "$TMP/j" -- "$SW" --seconds 15 > "$TMP/out" 2> "$TMP/err"
tap_eq $? 0 "hunch run --batch, cost limit 1%: exit 0 (complete)" ||
	jq -r '.not_tested[]? | "not tested: \(.hypothesis): \(.reason)"' \
		"$TMP/r.json" | tap_lines
tap_eq "$(jq -r '[.phases[0].nodes[] | select(.hypothesis ==
	"ExcessiveIOBlockingTime" and .focus == ["/Code", "/Process",
	"/SyncObject", "/Files"]) | .truth] | join(",")' "$TMP/r.json")" \
	true "ExcessiveIOBlockingTime is true on the whole program"
req=$(jq -r 'select(.t == "enable" and .metric == "io_wait" and
	.focus == ["/Code", "/Process", "/SyncObject", "/Files"]) | .req' \
	"$TMP/j" | head -1)
tap_eq "$(jq -r --argjson r "${req:-0}" 'select(.t == "reply" and
	.req == $r) | .sampled // false' "$TMP/j")" true \
	"its I/O time on the whole program was estimated from stack samples (journal reply)"
b=$(jq -c '[.bottlenecks[] | select(.hypothesis ==
	"ExcessiveIOBlockingTime" and (.focus[0] | endswith("/write")) and
	(.focus[1] | test("^/Process/[0-9]+/[0-9]+:main$")))][0]' "$TMP/r.json")
tap_diag "bottleneck: $b"
tap_eq "$(jq -r '.sampled' <<< "$b")" true \
	"a bottleneck: I/O in write() in thread main, marked sampled"
tap_ok $(jq -e '.value >= 0.5 and .value <= 1.05' <<< "$b" > /dev/null
	 echo $?) "its value is the thread's time in write(): 0.5-1.05 s/s ($(jq -r .value <<< "$b"))"
tap_ok $(grep -A1 '^findings, most impact first:' "$TMP/out" |
	 grep -q 'blocked in I/O, in `write`.*(estimated from stack samples)$'
	 echo $?) "the text report's first finding: blocked in I/O in write(), estimated from stack samples"
tap_eq "$(grep -c '^bn_smallwrites done$' "$TMP/out")" 1 \
	"the program's output is whole"
"$HUNCH" replay --batch "$TMP/j" > "$TMP/replay" 2> "$TMP/rerr"
sed -n '/^hunch report/,$p' "$TMP/out" > "$TMP/live"
tap_ok $(cmp -s "$TMP/live" "$TMP/replay"; echo $?) \
	"the replayed text report is byte-identical to the live one"
tap_done
