#!/bin/bash
# test-replay.sh - `hunch replay JOURNAL` on a terminal: the dashboard
# over a recorded search with time controls, in tmux.  Two
# journals, both deterministic to replay: a sim search with the
# target's output recorded (tests/replay/rw_journal.c, written here) and
# a live batch hunt of the bundled demo kept in tests/replay/data (the
# demo's own run is not deterministic, its replay is).  Every step is
# checked on the screen: the state at the start, `c` to each
# conclusion (the replay time is the time the report gives it), `g` to
# a time forward and back (the log rebuilt to that time, output lines
# included), speeds, play to the end, `e`, and the bottlenecks at the
# end equal to `hunch replay --batch`'s; bad journals; and the printed
# report when stdout is not a terminal.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
SOCK=hunch-replay-$$
export LC_ALL=C.UTF-8
unset NO_COLOR

. "$HUNCH_SOURCE_ROOT/tests/tui/tmux-lib.sh"
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
no_line() {  # no_line NAME ERE TEST-NAME...: no line matches now
	local s=$1 re=$2; shift 2
	tap_ok $(screen "$s" | grep -Eq -- "$re"; [ $? -ne 0 ]; echo $?) "$*"
}
status_line() { screen "$1" | sed -n 1p; }
hint_line() { screen "$1" | tail -n 1; }

# The report's bottlenecks as the dashboard's log lists them at the end:
# "N. Hyp<where,...> since T s".
report_bottlenecks() {
	# (bottlenecks only: an earlier finding reads "from T to T")
	# (the true ones of the details: the list of unconfirmed ones, shed
	# before measured again, comes after them and is not the log's)
	awk '/^ unconfirmed: / { exit }
	     /^ [0-9]+\. [A-Za-z]+: .* since / { n = $1; h = $2; sub(/:$/, "", h);
		s = $0; sub(/.* since /, "", s); sub(/ s.*/, "", s); next }
	     n != "" && /^    where: / { w = $0; sub(/^    where: /, "", w);
		gsub(/, /, ",", w); print n " " h "<" w "> since " s " s"; n = "" }' "$1"
}
log_bottlenecks() {  # the log's list, from the whole pane
	screen "$1" | sed -n 's/^# \([0-9][0-9]*\. [A-Za-z]*<.*> since [0-9.]* s\)$/\1/p'
}

SIM=$TMP/sim.jsonl
DEMO=$TMP/demo.jsonl
"$HUNCH_BUILD_ROOT/tests/replay/rw_journal" "$SIM"
gzip -dc "$HUNCH_SOURCE_ROOT/tests/replay/data/demo.jsonl.gz" >"$DEMO"
"$HUNCH" replay --batch "$SIM" >"$TMP/sim.report" 2>/dev/null
"$HUNCH" replay --batch "$DEMO" >"$TMP/demo.report" 2>/dev/null

# --- the sim journal at 80x24: start, conclusions, seeks --------------
new_term sim 80 24
out=$(cd "$TMP" && "$HUNCH" replay nosuch.jsonl 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 2 "a journal that does not exist: exit status 2"
tap_eq "$out" "hunch replay: cannot open journal nosuch.jsonl: No such file or directory ('hunch replay' with no argument lists the saved journals)" \
	"a journal that does not exist: the error says how to list the saved ones"
type_in sim "cd $TMP && $HUNCH replay sim.jsonl; echo RC=\$?"
check_screen sim '^ demo +pid 100 +paused 1x +0:00\.0/0:08\.2 +2 threads ' \
	"sim: opens paused at the first tick: target, recorded pid, 'paused 1x', 0:00.0 of 0:08.2, 2 threads"
check_screen sim '^paused at 0\.0 s: s play/pause  > next conclusion  t time  \+/- speed  \$ end$' \
	"sim: the hint line gives the replay's keys"
check_screen sim '^# replaying sim\.jsonl: 42 ticks, 8\.2 s$' "sim: the log says what is replayed"
check_screen sim '^\[1 Search\]  2 Where ' "sim: it opens on the Search pane, as the live dashboard does"
keys sim 2
check_screen sim '^       100:main$' "sim: the where pane has the recorded process and threads"
no_line sim 'demo: second' "sim: no output yet at 0.0 s"
keys sim 1
check_screen sim '^ Global search: 8 nodes, 0 true, 0 active, searching$' \
	"sim: the search pane at 0.0 s: the top-level nodes being enabled, none true"

keys sim '?'
check_screen sim 'hunch dashboard: keys' "?: the help"
check_screen sim '^replay: s play/pause  > next conclusion  t go to time  \+/- speed  \$ end$' \
	"?: and the replay's keys on the hint line under it"
check_screen sim '  Replay \(hunch replay\): these keys work in every pane( |$)' "?: the help's replay keys come first"
check_screen sim '    s play/pause \(at the end: again\)  > next conclusion  \$ end( |$)' "?: s, >, \$"
check_screen sim '    t go to time \(seconds or m:ss\)  \+/- speed \(0\.5x to 100x\)( |$)' "?: t, +/-"
keys sim x
keys sim '>'   # in the Search pane: c is the pane's (global/phase)
check_screen sim '^ demo +pid 100 +paused 1x +0:01\.2/0:08\.2 ' \
	"c: the replay stops at 1.2 s"
check_screen sim '^1\.2 s: CPUbound</Code,/Process,/SyncObject,/Files> tested true$' \
	"c: the hint names the node that became true"
check_screen sim '^   >T\* CPUbound  whole program .* 1\.2s$' \
	"c: the search pane shows CPUbound true since 1.2 s"
keys sim 6 6   # the log takes the body
check_screen sim '^# \+1\.2\) CPUbound tested true for </Code,/Process,/SyncObject,/Files>$' \
	"c: the log has the conclusion at its recorded time"
check_screen sim '^  demo: second 1$' "c: the output recorded at 1 s is in the log"
no_line sim 'demo: second 2' "c: and nothing recorded later"
keys sim 1 '>'
check_screen sim '^ demo +pid 100 +paused 1x +0:02\.4/0:08\.2 ' "c again: 2.4 s"
check_screen sim '^2\.4 s: CPUbound</Code/demo/demo\.c/main,/Process,/SyncObject,/Files> tested true$' \
	"c again: CPUbound at main became true"
check_screen sim '^     @T\* CPUbound  main .* 2\.4s$' \
	"c again: the search pane shows it, true since 2.4 s, under the whole program"
tap_ok $(grep -q '^ 1\. CPUbound: .* since 2\.4 s' "$TMP/sim.report"; echo $?) \
	"c again: the report gives that bottleneck the same time (since 2.4 s)"
keys sim t 1 . 5 Enter
check_screen sim '^ demo +pid 100 +paused 1x +0:01\.5/0:08\.2 ' "g 1.5 (back): 0:01.5"
check_screen sim '^     @[?.][*+ ] CPUbound  main ' "g 1.5: the search pane has CPUbound at main not concluded yet"
no_line sim '^     @T' "g 1.5: no refinement is true yet"
keys sim 6 6

keys sim t
check_screen sim '^go to time \(seconds or m:ss, Enter; Esc cancels\): _$' "g: asks for a time"
keys sim 5 . 5
check_screen sim '^go to time \(seconds or m:ss, Enter; Esc cancels\): 5\.5_$' "g: shows what is typed"
keys sim Enter
check_screen sim '^ demo +pid 100 +paused 1x +0:05\.5/0:08\.2 ' "g 5.5: the replay time is 0:05.5"
check_screen sim '^  demo: second 5$' "g 5.5: output up to 5 s in the log"
no_line sim 'demo: second 6' "g 5.5: none from 6 s"
keys sim PPage   # the log pane wraps its long lines: fewer fit
check_screen sim '^! demo: warning at 3 s$' "g 5.5: the recorded stderr line, marked !"
keys sim End
check_screen sim '^# \+4\.8\) ' "g 5.5: the search's messages up to 4.8 s"
no_line sim '^# \+6\.0\) ' "g 5.5: and none from 6.0 s"
keys sim t 0 : 0 3 . 5 Enter
check_screen sim '^ demo +pid 100 +paused 1x +0:03\.5/0:08\.2 ' "g 0:03.5 (back): the replay time is 0:03.5"
check_screen sim '^  demo: second 3$' "g back: the log is rebuilt to 3.5 s: output of 3 s"
no_line sim 'demo: second [45]' "g back: the lines of 4 s and 5 s are gone"
no_line sim '^# \+(3\.6|4\.8)\) ' "g back: so are the search's later messages"
keys sim Home
check_screen sim '^# replaying sim\.jsonl: 42 ticks, 8\.2 s$' "g back: the log starts again from the journal's first line"
keys sim End
keys sim t x y
check_screen sim '^go to time \(seconds or m:ss, Enter; Esc cancels\): _$' "g: letters are not taken"
keys sim Enter
check_screen sim '^go to time: nothing typed$' "g, Enter with nothing typed: says so"
keys sim t 1 : 7 5 Enter
check_screen sim "^go to time: '1:75' is not a time \(seconds, or m:ss\)$" "g 1:75: not a time"
keys sim t 1 Escape
check_screen sim '^go to time: cancelled$' "g then Esc: cancelled"
check_screen sim '^ demo +pid 100 +paused 1x +0:03\.5/0:08\.2 ' "g then Esc: the time stays"

keys sim +
check_screen sim '^ demo +pid 100 +paused 2x ' "+: speed 2x on the status line"
check_screen sim '^speed 2x$' "+: and in the hint"
keys sim + + + + + + + +
check_screen sim '^ demo +pid 100 +paused 100x ' "+ more: at most 100x"
keys sim - - - - - - - - - -
check_screen sim '^ demo +pid 100 +paused 0\.5x ' "-: at least 0.5x"
keys sim p   # 0.5x: 9 s to the end, time enough to see it play
check_screen sim '^ demo +pid 100 +playing 0\.5x +0:0[3-8]\.[0-9]/0:08\.2 ' \
	"p: playing at 0.5x from 3.5 s"
check_screen sim '^  demo: second 4$' "playing: the output of 4 s arrives in the log"
keys sim + + + +
WAIT=20 check_screen sim '^ demo +pid 100 +end 10x +0:08\.2/0:08\.2 ' \
	"+ while playing: 10x, and it reaches the end of the journal: 'end', 0:08.2"
check_screen sim '^the end of the journal: 8\.2 s \(s plays again\)$' "the hint says so"
check_screen sim '^# 21\. ExcessiveSyncWaitingTime</Code/demo/demo\.c/locker,' "the log lists the bottlenecks at the end (the 21st last)"

# --- the end: the bottlenecks are the --batch report's ------------------
TM kill-session -t sim
new_term end 139 70   # compact layout, lines wide enough for every focus
type_in end "cd $TMP && EDITOR=true XDG_CONFIG_HOME=$TMP/cfg $HUNCH replay sim.jsonl; echo RC=\$?"
check_screen end '^ demo +pid 100 +paused 1x +0:00\.0/0:08\.2 ' "end: opens at 0:00.0 (139x70)"
keys end 5 e
check_screen end "^ cannot edit the hypotheses: " \
	"in the Hypotheses pane e is the pane's (which does not edit a journal's hypotheses)"
tap_ok $(status_line end | grep -Eq '^ demo +pid 100 +paused 1x +0:00\.0/0:08\.2 '; echo $?) \
	"e in the Hypotheses pane: the replay does not move"
keys end + 
check_screen end '^ demo +pid 100 +paused 2x +0:00\.0/0:08\.2 ' "+ in the Hypotheses pane: 2x"
keys end 4 -
check_screen end '^ demo +pid 100 +paused 1x +0:00\.0/0:08\.2 ' "- in the Tunables pane: 1x"
keys end '$'
check_screen end '^ demo +pid 100 +end 1x +0:08\.2/0:08\.2 ' "\$ in the Tunables pane: the end"
keys end t 0 Enter
check_screen end '^ demo +pid 100 +paused 1x +0:00\.0/0:08\.2 ' "t 0 in the Tunables pane: back to the start"
keys end 2 m
check_screen end '^Enable a metric on ' "m in the where pane opens the metric picker"
keys end e
sleep 0.5
tap_ok $(status_line end | grep -Eq ' 0:00\.0/0:08\.2 '; echo $?) "e in the picker stays the picker's"
keys end Escape
keys end e
check_screen end '^ demo +pid 100 +end 1x +0:08\.2/0:08\.2 ' "e: jumps to the end, 0:08.2"
keys end 6 6
check_screen end '^# end of the journal: 21 bottlenecks$' "e: the log counts the bottlenecks"
want=$(report_bottlenecks "$TMP/sim.report")
tap_eq "$(echo "$want" | wc -l)" 21 "the --batch report lists 21 bottlenecks"
tap_eq "$(log_bottlenecks end)" "$want" \
	"e: the bottlenecks at the end are the --batch report's (names, foci, times, order)"
keys end p
check_screen end '^ demo +pid 100 +playing 1x +0:0[0-8]\.[0-9]/0:08\.2 ' "p at the end: plays again from the start"
keys end p q
check_screen end '^RC=0$' "q quits the replay at once, status 0"
tap_eq "$(TM display -p -t end '#{alternate_on} #{cursor_flag}')" "0 1" "the terminal is restored"
TM kill-session -t end

# --- the live demo's journal ------------------------------------------
# (tall and wide enough for the log pane to list its 20-odd bottlenecks whole)
new_term demo 200 90
type_in demo "cd $TMP && $HUNCH replay demo.jsonl; echo RC=\$?"
check_screen demo '^ hunch-demo +pid [0-9]+ +paused 1x +0:00\.3/0:10\.1 ' \
	"demo: the live demo's journal opens at its first tick, 0:00.3 of 0:10.1"
keys demo '>'   # on the Search pane, where c is the pane's
check_screen demo '^ hunch-demo +pid [0-9]+ +paused 1x +0:01\.9/0:10\.1 ' "demo: > stops at 1.9 s"
check_screen demo '^1\.9 s: CPUbound</Code,/Process,/SyncObject,/Files> tested true$' \
	"demo: CPUbound became true there"
tap_ok $(grep -q '^ 1\. CPUbound: .* since 3\.1 s' "$TMP/demo.report"; echo $?) \
	"demo: the report's first bottleneck, refined from it, true since 3.1 s"
keys demo e 6 6
nb=$(report_bottlenecks "$TMP/demo.report" | wc -l)
check_screen demo "^# end of the journal: $nb bottlenecks\$" "demo: e: the report's $nb bottlenecks at the end"
tap_eq "$(log_bottlenecks demo)" "$(report_bottlenecks "$TMP/demo.report")" \
	"demo: the same as hunch replay --batch's"
TM resize-window -t demo -x 80 -y 24
check_screen demo '^ hunch-demo +pid [0-9]+ +end 1x +0:10\.1/0:10\.1 ' "demo: resized to 80x24: the status line again"
tap_eq "$(screen demo | wc -l)" 24 "demo: resized: 24 lines"
keys demo C-c
check_screen demo '^RC=0$' "demo: Ctrl-C quits, status 0"
TM kill-session -t demo

# --- the journal's end in the header: a search stopped by its time limit ---
# A live batch search of bn_mutex (it runs 120 s) stopped after 3 s: the
# replayed consultant plays every recorded tick and would go on
# searching; at the end the header and the status line say what the
# journal's end record says, and after a seek back the search's own
# word again.
TL=$TMP/tl.jsonl
"$HUNCH" run --batch --time-limit 3 --kill-at-end --journal "$TL" -- \
	"$TARGETS_DIR/bn_mutex-O2-nopie" --seconds 120 --threads 4 \
	>"$TMP/tl.report" 2>/dev/null
tap_ok $(tail -n 1 "$TL" | grep -q '"t":"end",.*"reason":"time_limit"'; echo $?) \
	"time limit: the live search's journal ends with reason time_limit"
tap_ok $(grep -q '^search: stopped (time limit)$' "$TMP/tl.report"; echo $?) \
	"time limit: its report says 'stopped (time limit)'"
header_word() {  # the Search pane header's state word(s)
	screen "$1" | sed -n 's/^ Global search: [0-9]* nodes, [0-9]* true, [0-9]* active, \([a-z ]*\)$/\1/p'
}
status_word() {  # the status line's, after the experiment counts
	status_line "$1" | sed -n 's/^.* [0-9][0-9]*+[0-9][0-9]* \([a-z ]*\)$/\1/p'
}
new_term tl 80 24
type_in tl "cd $TMP && $HUNCH replay tl.jsonl; echo RC=\$?"
check_screen tl '^ bn_mutex[^ ]* +pid [0-9]+ +paused 1x ' "time limit: the replay opens paused"
check_screen tl '^ Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, (searching|slowed|idle)$' \
	"time limit: at the first tick the header says the search runs"
keys tl '$'
check_screen tl '^ bn_mutex[^ ]* +pid [0-9]+ +end 1x ' "time limit: \$ goes to the end of the journal"
check_screen tl '^ Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, time limit$' \
	"time limit: at the end the header says the journal's 'time limit', not searching"
tap_eq "$(status_word tl)" "time limit" "time limit: and so does the status line"
keys tl t 1 Enter
check_screen tl '^ bn_mutex[^ ]* +pid [0-9]+ +paused 1x +0:01\.0/' "time limit: t 1 seeks back to 1.0 s"
check_screen tl '^ Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, (searching|slowed|idle)$' \
	"time limit: back before the end the header says the search runs again"
tap_eq "$(status_word tl)" "$(header_word tl)" "time limit: the status line says the same word"
keys tl s
WAIT=30 check_screen tl '^ bn_mutex[^ ]* +pid [0-9]+ +end 1x ' "time limit: s plays it to the end"
check_screen tl '^ Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, time limit$' \
	"time limit: played to the end: 'time limit' again"
keys tl q
check_screen tl '^RC=0$' "time limit: q quits, status 0"
sed '$d' "$TL" >"$TMP/cut.jsonl"   # the end record lost: hunch was killed
type_in tl "clear; $HUNCH replay cut.jsonl 2>/dev/null; echo RC=\$?"
check_screen tl '^ bn_mutex[^ ]* +pid [0-9]+ +paused 1x ' "no end record: the replay opens"
keys tl '$'
check_screen tl '^ Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, cut short$' \
	"no end record: at the end the header says the journal was cut short"
tap_eq "$(status_word tl)" "cut short" "no end record: and so does the status line"
keys tl q
check_screen tl '^RC=0$' "no end record: q quits, status 0"
TM kill-session -t tl

# --- backward seeks: the screen is the one played forward ---------------
# A backward seek restores the latest checkpoint before the target and
# plays on from there; the screen (every line but the hint) must be the
# one reached by playing forward from the start.  With checkpoints at
# every tick (HUNCH_REPLAY_CKPT_MS=0), and as shipped (20 ms of play
# apart: on these short journals, the first tick's only).
stable() {  # stable NAME: the screen once two captures 0.1 s apart agree
	local a b i
	a=$(screen "$1")
	for ((i = 0; i < 50; i++)); do
		sleep 0.1
		b=$(screen "$1")
		[ "$a" = "$b" ] && break
		a=$b
	done
	screen "$1"   # whole, with its blank last lines
}
panes() {  # panes NAME FILE: the search and where panes, hint line cut
	keys "$1" 1; wait_screen "$1" '\[1 Search\]' >/dev/null
	stable "$1" | sed '$d' >"$2.1"
	keys "$1" 2; wait_screen "$1" '\[2 Where\]' >/dev/null
	stable "$1" | sed '$d' >"$2.2"
}
same_panes() { cmp -s "$1.1" "$2.1" && cmp -s "$1.2" "$2.2"; echo $?; }
for ms in 0 ""; do
	for j in sim demo; do
		if [ -n "$ms" ]; then name="$j, checkpoints at every tick"
		else name="$j, checkpoints as shipped"; fi
		new_term seek 100 40
		type_in seek "cd $TMP && HUNCH_REPLAY_CKPT_MS=$ms $HUNCH replay $j.jsonl; echo RC=\$?"
		wait_screen seek ' paused 1x ' >/dev/null
		keys seek t 5 . 5 Enter
		wait_screen seek ' 0:05\.5/' >/dev/null
		panes seek "$TMP/fwd"
		keys seek e
		wait_screen seek ' end 1x ' >/dev/null
		keys seek t 5 . 5 Enter
		check_screen seek ' paused 1x +0:05\.5/' "$name: e, then g 5.5 goes back to 0:05.5"
		# checkpoints were taken while g and e played forward
		[ -n "$ms" ] && check_screen seek "^5\\.5 s: back from the checkpoint at $([ $j = sim ] && echo 5\\.4 || echo 5\\.[0-5]) s\$" \
			"$name: the hint says which checkpoint it went back from: the tick before 5.5 s"
		panes seek "$TMP/back"
		tap_ok $(same_panes "$TMP/fwd" "$TMP/back") \
			"$name: the search and where panes and the log after the backward seek are the ones played forward to 5.5 s"
		keys seek t 7 Enter
		wait_screen seek ' 0:07\.0/' >/dev/null
		keys seek t 2 . 5 Enter
		wait_screen seek ' 0:02\.5/' >/dev/null
		panes seek "$TMP/back25"
		keys seek q
		type_in seek "clear; HUNCH_REPLAY_CKPT_MS=$ms $HUNCH replay $j.jsonl; echo RC=\$?"
		wait_screen seek ' paused 1x ' >/dev/null
		keys seek t 2 . 5 Enter
		wait_screen seek ' 0:02\.5/' >/dev/null
		panes seek "$TMP/fwd25"
		tap_ok $(same_panes "$TMP/fwd25" "$TMP/back25") \
			"$name: 7 s back to 2.5 s: the panes of a fresh replay played to 2.5 s"
		TM kill-session -t seek
	done
done

# --- steering: checkpoints are the recording's search's -----------------
# A tunable edited makes every checkpoint wrong (they were played under
# the old value): the next backward seek plays from the start, under
# the new one, and checkpoints are taken again from there.
new_term steer 100 40
type_in steer "cd $TMP && HUNCH_REPLAY_CKPT_MS=0 $HUNCH replay sim.jsonl; echo RC=\$?"
wait_screen steer ' paused 1x ' >/dev/null
keys steer t 5 Enter
wait_screen steer ' 0:05\.0/' >/dev/null
keys steer t 3 Enter
check_screen steer '^3\.0 s: back from the checkpoint at 2\.8 s$' \
	"steer: before any steering, g 3 goes back from the checkpoint at 2.8 s"
keys steer 4 Enter BSpace BSpace BSpace BSpace BSpace 0 . 1 Enter
check_screen steer '^ costLimit +0\.1 ' "steer: costLimit edited to 0.1 in the Tunables pane"
keys steer 1 t 2 Enter
check_screen steer '^2\.0 s: played again from the start$' \
	"steer: after the edit, g 2 plays again from the start (the checkpoints were of the old costLimit)"
keys steer t 3 Enter
wait_screen steer ' 0:03\.0/' >/dev/null
keys steer t 1 Enter
check_screen steer '^1\.0 s: back from the checkpoint at 1\.0 s$' \
	"steer: and checkpoints are taken again under the new value"
check_screen steer '^ demo +pid 100 +paused 1x +0:01\.0/0:08\.2 .*cost 0\.0%/10\.0%' \
	"steer: the status line shows the new limit, 10%"
keys steer q
# An experiment started by hand steers the search, and its log line is
# not the recording's: seeking back and on again, the log is the one a
# fresh replay shows (no experiment by hand).
type_in steer "clear; HUNCH_REPLAY_CKPT_MS=0 $HUNCH replay sim.jsonl; echo RC=\$?"
wait_screen steer ' paused 1x ' >/dev/null
keys steer t 5 Enter
wait_screen steer ' 0:05\.0/' >/dev/null
keys steer 2 Down Down Down Down f x
check_screen steer '^Start an experiment on /Code/demo/demo\.c/locker' "steer: x on locker opens the picker"
keys steer Down Down Down Down Enter
check_screen steer '^ExcessiveIOBlockingTime on /Code/demo/demo\.c/locker started by hand$' \
	"steer: ExcessiveIOBlockingTime on locker started by hand"
check_screen steer '^# \+4\.8\) Experiment ExcessiveIOBlockingTime</Code/demo/demo\.c/locker,' \
	"steer: the log says so"
keys steer t 6 Enter
wait_screen steer ' 0:06\.0/' >/dev/null
keys steer t 4 Enter
check_screen steer '^4\.0 s: back from the checkpoint at [34]\.[0-9] s$' "steer: g 4 goes back from a checkpoint"
no_line steer 'Experiment ExcessiveIOBlockingTime' "steer: the experiment by hand is gone from the log"
keys steer t 6 Enter
wait_screen steer ' 0:06\.0/' >/dev/null
keys steer t 5 . 5 Enter
check_screen steer '^5\.5 s: back from the checkpoint at 5\.4 s$' "steer: played on to 6 s and back to 5.5 s from a checkpoint"
panes steer "$TMP/steered"
keys steer q
type_in steer "clear; $HUNCH replay sim.jsonl; echo RC=\$?"
wait_screen steer ' paused 1x ' >/dev/null
keys steer t 5 . 5 Enter
wait_screen steer ' 0:05\.5/' >/dev/null
keys steer 2 Down Down Down Down f   # the same focus: view state
wait_screen steer '^ focus </Code/demo/demo\.c/locker,' >/dev/null
panes steer "$TMP/fresh"
tap_ok $(same_panes "$TMP/steered" "$TMP/fresh") \
	"steer: the panes and the log at 5.5 s are a fresh replay's: nothing of the steered search kept"
keys steer q
TM kill-session -t steer

# --- curves added by hand stay across seeks ------------------------------
new_term curve 100 40
type_in curve "cd $TMP && $HUNCH replay sim.jsonl; echo RC=\$?"
wait_screen curve ' paused 1x ' >/dev/null
keys curve 2 Down Down Down Down f m
check_screen curve '^Enable a metric on /Code/demo/demo\.c/locker:$' "curve: m on locker opens the picker"
keys curve Enter
check_screen curve '^>a cpu_inclusive /Code/demo/demo\.c/locker ' "curve: cpu_inclusive on locker is a curve"
keys curve t 6 Enter
check_screen curve '^>a cpu_inclusive /Code/demo/demo\.c/locker  0\.32 CPUs, 16 pts$' \
	"curve: played to 6 s, it has 16 points"
keys curve t 2 Enter
check_screen curve ' paused 1x +0:02\.0/' "curve: g 2 goes back to 2.0 s"
check_screen curve '^>a cpu_inclusive /Code/demo/demo\.c/locker  ' \
	"curve: after the backward seek the curve is still there, enabled again in the search shown"
keys curve e
check_screen curve '^>a cpu_inclusive /Code/demo/demo\.c/locker  [0-9.]+ CPUs, 27 pts$' \
	"curve: and at the end it has its data (27 points)"
keys curve t 6 Enter
wait_screen curve ' paused 1x +0:06\.0/' >/dev/null
keys curve 2 Up f m
check_screen curve '^Enable a metric on /Code/demo/demo\.c/compute:$' "curve: m on compute"
keys curve Down Enter
check_screen curve '^>b sync_wait /Code/demo/demo\.c/compute ' "curve: a second one, sync_wait on compute"
keys curve t 1 Enter
check_screen curve ' paused 1x +0:01\.0/' "curve: g 1 goes back to 1.0 s"
check_screen curve '^ a cpu_inclusive /Code/demo/demo\.c/locker ' "curve: both curves kept: a"
check_screen curve '^>b sync_wait /Code/demo/demo\.c/compute ' "curve: and b, still selected"
keys curve d
check_screen curve '^>a cpu_inclusive /Code/demo/demo\.c/locker ' "curve: d removes the selected one"
keys curve t 0 Enter
check_screen curve ' paused 1x +0:00\.0/' "curve: g 0"
no_line curve 'sync_wait /Code/demo/demo\.c/compute' "curve: a curve removed stays removed after a seek"
keys curve q
TM kill-session -t curve

# --- bad journals ------------------------------------------------------
: >"$TMP/empty.jsonl"
awk 'NR == 5 { print "not json"; next } { print }' "$SIM" | head -c -30 >"$TMP/bad.jsonl"
new_term bad 80 24
type_in bad "cd $TMP && $HUNCH replay empty.jsonl; echo RC=\$?"
check_screen bad '^hunch replay: empty\.jsonl is empty: not a hunch journal' \
	"empty journal: the reader's message on the terminal"
check_screen bad '^RC=2$' "empty journal: status 2, no dashboard"
type_in bad "clear; $HUNCH replay bad.jsonl; echo RC=\$?"
check_screen bad '^ demo +pid 100 +paused 1x ' "damaged journal: the dashboard opens"
keys bad 6 6
check_screen bad '^# skipped: bad\.jsonl: line 5 \(byte [0-9]+\): not valid JSON' \
	"damaged journal: the log shows the skipped line's message"
check_screen bad '^# bad\.jsonl: line [0-9]+ \(byte [0-9]+\) is incomplete: the journal was cut there' \
	"damaged journal: and the cut end's"
keys bad e
check_screen bad '^ demo +pid 100 +end 1x ' "damaged journal: replays to its last complete record"
keys bad q
check_screen bad '^RC=0$' "damaged journal: q, status 0"
check_screen bad '^hunch replay: skipped: bad\.jsonl: line 5' "damaged journal: stderr says it after the dashboard too"
head -1 "$SIM" >"$TMP/header.jsonl"
type_in bad "clear; $HUNCH replay header.jsonl; echo RC=\$?"
check_screen bad '^ demo +pid 100 +end 1x +0:00\.0/0:00\.0 ' "header only: the dashboard opens at its end, 0:00.0 of 0:00.0"
keys bad 6 6 e c p t 1 Enter
check_screen bad '^# end of the journal: nothing was recorded after the header$' \
	"header only: e, c, p and g say there is nothing to replay"
keys bad q
check_screen bad '^RC=0$' "header only: q, status 0"
TM kill-session -t bad

# --- a terminal hunch cannot use: the printed report ---------------------
new_term unk 80 24
type_in unk "cd $TMP && TERM=nosuchterm $HUNCH replay sim.jsonl 2>unk.err >/dev/tty; echo RC=\$?"
check_screen unk '^RC=0$' "unknown TERM: status 0"
tap_eq "$(cat "$TMP/unk.err")" "hunch replay: cannot use terminal 'nosuchterm'; printing the report" \
	"unknown TERM: says so on stderr"
tap_ok $(screen_all unk | grep -q '^hunch report: demo (pid 100), 8\.2 s$'; echo $?) \
	"unknown TERM: the report is printed on the terminal"
TM kill-session -t unk

# --- not a terminal: the printed report, as before ----------------------
"$HUNCH" replay "$SIM" >"$TMP/piped.report" 2>/dev/null </dev/null
tap_ok $(cmp -s "$TMP/piped.report" "$TMP/sim.report"; echo $?) \
	"stdout not a terminal: the report hunch replay --batch prints, byte for byte"
msg=$(cat "$SIM" | "$HUNCH" replay --batch /dev/stdin 2>&1 >/dev/null; echo "RC=$?")
tap_eq "$msg" "hunch replay: /dev/stdin cannot be replayed from a pipe: replay reads it twice (an index first); save it to a file
RC=2" "a journal on a pipe: says why it cannot be replayed, status 2"
tap_done
