#!/bin/bash
# test-untested.sh - `d` on a node the search could not test shows why,
# in the source's words, wrapped at 80 columns: a real search of
# bn_sleepy with a hypothesis whose metric counts calls of a function no
# program has (tests/e2e/untestable.json: the live source refuses it),
# then its journal in the replay dashboard at its end (80x24, then
# 200x50); and the same
# search live in the dashboard: it opens on the Search pane, `d` gives
# the reason there too, the findings strip says the result is
# incomplete when the program ends, and `q` prints that result.
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

# --- the same at 200x50: the where pane on the left, the reason in the
# Search pane on the right, wrapped at its width ------------------------------
new_term w 200 50
type_in w "cd $TMP && $HUNCH replay j.jsonl"
check_screen w '^ bn_sleep[^ ]* +pid [0-9]+ +paused' "200x50: the replay dashboard opens"
keys w '$'
check_screen w '^ bn_sleep[^ ]* +pid [0-9]+ +end ' "200x50: \$: at the journal's end"
keys w 1
check_screen w '│   >x  CallsAbsentFunction  whole program ' "200x50: the node is marked x"
for ((i = 0; i < 20; i++)); do
	screen w | grep -q '│CallsAbsentFunction</Code,/Process,/SyncObject,/Files>$' && break
	before=$(screen w); keys w j
	for ((t = 0; t < 60; t++)); do sleep 0.05; [ "$(screen w)" != "$before" ] && break; done
done
tap_ok $(screen w | grep -q '│CallsAbsentFunction</Code,/Process,/SyncObject,/Files>$'; echo $?) "200x50: j: the cursor is on it"
keys w d
check_screen w '│ x  CallsAbsentFunction: not tested, inactive   \(d or Bksp: back\)$' "200x50: d: the head says not tested"
check_screen w '│ not tested  the source could not enable it \(metric absent_calls on the whole program: none of its functions is in the$' \
	"200x50: d: why, with the source's words, to the pane's edge"
check_screen w '│             program; nothing to measure here\)$' "200x50: d: the reason wraps under itself"
wide=0
while IFS= read -r line; do
	[ "${#line}" -le 200 ] || wide=$((wide + 1))
done < <(screen w)
tap_eq "$wide" 0 "200x50: d: no line wider than 200 columns"
keys w q

# --- live: the dashboard on the same search ---------------------------------
new_term l 80 24
type_in l "cd $TMP && $HUNCH run --journal $TMP/live.jsonl --hypotheses $HUNCH_SOURCE_ROOT/tests/e2e/untestable.json -- $TARGETS_DIR/bn_sleepy-O2-pie --seconds 6; echo RC=\$?"
check_screen l '^\[1 Search\]  2 Where   3 Histograms   4 Tunables   5 Hypotheses   6 Log$' \
	"live: the dashboard opens on the Search pane"
check_screen l '^ Findings ─+$' "live: the findings strip is under it"
WAIT=20 check_screen l '^   >x  CallsAbsentFunction  whole program ' \
	"live: the node is marked x (not tested)"
tap_ok $(down l 'CallsAbsentFunction</Code,/Process,/SyncObject,/Files>'
	 echo $?) "live: j: the cursor is on it"
keys l d
check_screen l '^ x  CallsAbsentFunction: not tested, inactive   \(d or Bksp: back\)$' \
	"live: d: the head says not tested"
check_screen l '^ not tested  the source could not enable it \(metric absent_calls on the whole$' \
	"live: d: why, with the source's words"
check_screen l '^             program: none of its functions is in the program; nothing to$' \
	"live: d: the reason wraps under itself"
check_screen l '^             measure here\)$' "live: d: to its end"
keys l BSpace
WAIT=20 check_screen l '^ bn_sleepy-O2-pie +pid [0-9]+ +exited 0 ' "live: the program ends"
check_screen l '^ Findings at the end ─+$' "live: the strip says the program has ended (no finding: no count)"
check_screen l '^ exited 0 at 0:0[6-9]: incomplete: 1 hypothesis could not be tested$' \
	"live: its summary: how the program ended, when, and the incomplete result"
tap_eq "$(screen l | sed -n '/^ Findings at the end/,/^ 6 Log/p' | wc -l)" 3 \
	"live: the strip is its title and the summary, nothing else"
keys l q
wait_screen l '^RC=[0-9][0-9]*$' 10 >/dev/null
# (no finding: the whole report, which is short; the batch report of
# the same search, replayed from its journal, is the reference)
got=$(screen_all l | sed -n '/^hunch report: /,/^hunch: journal /p' | sed '$d')
"$HUNCH" replay --batch "$TMP/live.jsonl" >"$TMP/replay.txt" 2>/dev/null
tap_eq "$got" "$(cat "$TMP/replay.txt")" "live: q prints the report's head: the batch report of the same search (no finding: all of it)"
tap_ok $(grep -q '^ incomplete: 1 hypothesis could not be tested' <<< "$got"; echo $?) \
	"live: it says the search is incomplete"
tap_ok $(screen_all l | grep -qx 'RC=0'; echo $?) "live: hunch exits with the program's status, 0"
tap_done
