#!/bin/bash
# test-hint-fnptr.sh - a batch hunt reaches a hot function that only a
# function pointer calls (tests/hint/hint_fnptr, as built and stripped):
# the journal records fnp_dispatch's callees as exactly fnp_hot (the
# sampled edge: the parser sees no callee there), the first bottleneck
# is CPUbound at fnp_hot, and the replay of the journal concludes the
# same bottlenecks (callees answers are journaled and replayed).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for prog in hint_fnptr hint_fnptr-stripped; do
	tap_diag "$prog"
	"$HUNCH" run --batch --time-limit 15 --kill-at-end --journal "$TMP/j" \
		--report "$TMP/r.json" -- "$HUNCH_BUILD_ROOT/tests/hint/$prog" 60 \
		> "$TMP/out" 2> "$TMP/err"
	tap_eq "$?" 0 "$prog: run --batch exits 0"
	src=hint_fnptr.c
	[ "$prog" = hint_fnptr-stripped ] && src='<unknown>'
	code="/Code/$prog/$src"
	got=$(jq -c --arg p "$code/fnp_dispatch" \
		'select(.t == "callees" and .path == $p) | .callees' "$TMP/j" |
		sort -u)
	tap_eq "$got" "[\"$code/fnp_hot\"]" \
		"$prog: every answer for fnp_dispatch's callees is fnp_hot alone"
	got=$(jq -c '.bottlenecks[0] | [.hypothesis, .focus[0]]' "$TMP/r.json")
	tap_eq "$got" "[\"CPUbound\",\"$code/fnp_hot\"]" \
		"$prog: the first bottleneck is CPUbound at fnp_hot" ||
		tap_lines < "$TMP/err"
	"$HUNCH" replay --batch --report "$TMP/rr.json" "$TMP/j" \
		> /dev/null 2> "$TMP/rerr"
	tap_eq "$?" 0 "$prog: the journal replays"
	tap_eq "$(jq -cS .bottlenecks "$TMP/rr.json")" \
		"$(jq -cS .bottlenecks "$TMP/r.json")" \
		"$prog: the replay concludes the same bottlenecks"
done
tap_done
