#!/bin/bash
# test-untested.sh - `d` on a node the search could not test shows why,
# in the source's words, wrapped at 80 columns: a real search of
# bn_sleepy with a hypothesis whose metric counts calls of a function no
# program has (tests/e2e/untestable.json: the live source refuses it),
# then its journal in the replay dashboard at its end.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
SOCK=hunch-untested-$$
export LC_ALL=C.UTF-8  # ${#line} counts characters, not bytes
. "$HUNCH_SOURCE_ROOT/tests/tui/tmux-lib.sh"
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
# down NAME FULL-NAME: j until the pane's last line (the cursor's node,
# in full) is FULL-NAME, each j once the screen showed the last one.
down() {
	local i t before
	for ((i = 0; i < 20; i++)); do
		before=$(screen "$1")
		grep -qxF -- "$2" <<< "$before" && return 0
		keys "$1" j
		for ((t = 0; t < 60; t++)); do
			sleep 0.05
			[ "$(screen "$1")" != "$before" ] && break
		done
	done
	return 1
}

"$HUNCH" run --batch --time-limit 30 --kill-at-end --journal "$TMP/j.jsonl" \
	--hypotheses "$HUNCH_SOURCE_ROOT/tests/e2e/untestable.json" -- \
	"$TARGETS_DIR/bn_sleepy-O2-pie" --seconds 40 > /dev/null 2>&1
tap_eq $? 3 "the search of bn_sleepy with an untestable hypothesis: exit 3"

new_term u 80 24
type_in u "cd $TMP && $HUNCH replay j.jsonl"
check_screen u '^ bn_sleep[^ ]* pid [0-9]+ paused' "the replay dashboard opens"
keys u e
check_screen u '^ bn_sleep[^ ]* pid [0-9]+ end ' "e: at the journal's end"
keys u 1
check_screen u '^   >x  CallsAbsentFunction  whole program ' \
	"at the end the Search pane marks the node x (not tested)"
tap_ok $(down u 'CallsAbsentFunction</Code,/Process,/SyncObject,/Files>'
	 echo $?) "j: the cursor is on it"
keys u d
check_screen u '^ x  CallsAbsentFunction: not tested, inactive   \(d or Bksp: back\)$' \
	"d: the head says not tested"
check_screen u '^ not tested  the source could not enable it \(metric absent_calls on the whole$' \
	"d: why, with the source's words"
check_screen u '^             program: none of its functions is in the program; nothing to$' \
	"d: the reason wraps under itself"
check_screen u '^             measure here\)$' "d: to its end"
check_screen u '^ value       not measured   threshold PC_AbsentCallsThreshold$' \
	"d: not measured (not 'yet')"
wide=0
while IFS= read -r line; do
	[ "${#line}" -le 80 ] || wide=$((wide + 1))
done < <(screen u)
tap_eq "$wide" 0 "d: no line wider than 80 columns"
keys u q
tap_done
