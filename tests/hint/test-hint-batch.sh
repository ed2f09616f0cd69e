#!/bin/bash
# test-hint-batch.sh - `hunch run --batch` asks the live source for hints
# and gets live values: the journal records them, the spinning thread's
# start function has most of the CPU samples, the start functions of
# threads that wait have half the blocked observations of their kind
# (their stacks unwound where they wait), the thread blocked on the
# mutex has half of the
# sync observations (another waits on a heap mutex); each asked by
# kind, as the search asks for its hypothesis's refinements ("PATH?cpu",
# "PATH?wait=sync_wait", "PATH?wait=io_wait"), never by PATH alone; the
# search
# queues its /Code refinements in the order of the hints (the spinning
# thread's function first); with the tunable hintSampleRate set to 0,
# every hint is unknown.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TARGET=$HUNCH_BUILD_ROOT/tests/hint/hint_target
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
mkfifo "$TMP/fifo"

"$HUNCH" run --batch --time-limit 10 --kill-at-end --journal "$TMP/j" \
	--report "$TMP/r.json" -- "$TARGET" "$TMP/fifo" 60 \
	> "$TMP/out" 2> "$TMP/err"
tap_eq "$?" 0 "run --batch on hint_target: exit 0"
jq -c 'select(.t == "hint")' "$TMP/j" > "$TMP/hints"
tap_diag "$(wc -l < "$TMP/hints") hint records, e.g. $(head -2 "$TMP/hints" | tr '\n' ' ')"
tap_ok $([ -s "$TMP/hints" ]; echo $?) "the journal records hints"
tap_ok $(jq -se 'all(.share >= -1 and .share <= 1)' "$TMP/hints" \
	> /dev/null; echo $?) "every share is in [-1, 1]"
tap_ok $(jq -se 'any(.share > 0)' "$TMP/hints" > /dev/null; echo $?) \
	"hints have live values (some share > 0)"

code=/Code/hint_target/hint_target.c
share() { jq -s --arg p "$1" '[.[] | select(.path == $p) | .share] | max' \
	"$TMP/hints"; }
# The last answer: its window holds the most observations (the first
# ticks after a thread was created see it alone, or few of the other's:
# locker read 0.625 over 8 ticks on a loaded machine).
last_share() { jq -s --arg p "$1" '[.[] | select(.path == $p) | .share] | last' \
	"$TMP/hints"; }
tap_ok $(jq -ne --argjson s "$(share "$code/spinner?cpu")" '$s >= 0.5' \
	> /dev/null; echo $?) "spinner (the busy thread's start function) has most CPU samples: $(share "$code/spinner?cpu")"
# A blocked thread's stack is unwound where it waits: its functions get
# their share of the blocked observations of their kind (two threads wait
# in sync, locker and heaplock; two in I/O, reader and sock).
between() { jq -ne --argjson s "$1" "\$s >= $2 and \$s <= $3" > /dev/null; echo $?; }
sync='?wait=sync_wait'
io='?wait=io_wait'
tap_ok $(between "$(last_share "$code/locker$sync")" 0.4 0.6) "locker (blocked on a mutex) has half the sync observations: $(last_share "$code/locker$sync")"
tap_ok $(between "$(last_share "$code/reader$io")" 0.4 0.6) "reader (blocked in read) has half the I/O observations: $(last_share "$code/reader$io")"
tap_ok $(jq -ne --argjson s "$(share "$code/spinner$io")" '$s != null and $s < 0.1' \
	> /dev/null; echo $?) "spinner, which only computes, is no evidence of I/O: $(share "$code/spinner$io")"
locker=$(jq -r 'select(.path | test("^/Process/[0-9]+/[0-9]+:locker\\?wait=sync_wait$"))
	| .path' "$TMP/hints" | head -1)
tap_ok $([ -n "$locker" ]; echo $?) "the locker thread's sync hint is asked: $locker"
# Two threads wait in sync (locker on hint_lock, heaplock on a heap
# mutex), seen at the same ticks once both exist: half each, give or take
# the first ticks after they were created.
tap_ok $(between "$(last_share "$locker")" 0.4 0.6) "the thread blocked on hint_lock has half the sync observations: $(last_share "$locker")"

# The first /Code refinement queued under a top-level hypothesis is the
# one with the largest hint (node ids follow the order nodes are added),
# or, when spinner holds nearly all the samples (brief's gone from the
# window), the function its chain spins in: skipDominantLevels tests it
# first (consultant/README.md, "Dominant descendants").
# hint_brief spins 0.5 s at the start beside spinner: a search that
# ranks its first refinements that early can see them even (then brief
# may come first, and the hints asked at that moment must say so).
first=$(jq -r '[.phases[0].nodes[] | select(.focus[0] | startswith("/Code/"))]
	| min_by(.id) | .focus[0]' "$TMP/r.json")
brief_even() {  # were brief's CPU samples at least spinner's when first asked?
	jq -se --arg b "$code/hint_brief?cpu" --arg s "$code/spinner?cpu" '
		[group_by(.ts)[] | map({(.path): .share}) | add |
		 select(.[$b] != null and .[$s] != null)][0] |
		.[$b] >= .[$s]' "$TMP/hints" > /dev/null
}
tap_ok $([ "$first" = "$code/spinner" ] ||
	 [ "$first" = "$code/hint_spin_inner" ] ||
	 { [ "$first" = "$code/hint_brief" ] && brief_even; }; echo $?) \
	"the search refines /Code first where the samples are: $first"

# The rate is the tunable hintSampleRate when a hypotheses file defines
# it (hint-rate.json here); 0 turns the sampler off: every hint unknown.
"$HUNCH" run --batch --time-limit 10 --kill-at-end --journal "$TMP/j0" \
	--hypotheses "$HUNCH_SOURCE_ROOT/tests/hint/hint-rate.json" \
	--set hintSampleRate=0 -- "$TARGET" "$TMP/fifo" 60 \
	> "$TMP/out0" 2> "$TMP/err0"
tap_eq "$?" 0 "run --batch with hintSampleRate=0: exit 0"
jq -c 'select(.t == "hint")' "$TMP/j0" > "$TMP/hints0"
tap_ok $([ -s "$TMP/hints0" ] && jq -se 'all(.share < 0)' "$TMP/hints0" \
	> /dev/null; echo $?) "hintSampleRate=0: hints are asked and all unknown ($(wc -l < "$TMP/hints0") records)"
tap_done
