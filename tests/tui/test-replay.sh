#!/bin/bash
# test-replay.sh - `hunch replay JOURNAL` on a terminal: the dashboard
# over a recorded search with time controls (issue 6), in tmux.  Two
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
	awk '/^ [0-9]+\. [A-Za-z]+: / { n = $1; h = $2; sub(/:$/, "", h);
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
type_in sim "cd $TMP && $HUNCH replay sim.jsonl; echo RC=\$?"
check_screen sim '^ demo +pid 100 +paused 1x +0:00\.0/0:08\.2 +2 threads ' \
	"sim: opens paused at the first tick: target, recorded pid, 'paused 1x', 0:00.0 of 0:08.2, 2 threads"
check_screen sim '^paused at 0\.0 s: p play/pause  c next conclusion  g go to time  \+/- speed  e en' \
	"sim: the hint line gives the replay's keys"
check_screen sim '^# replaying sim\.jsonl: 42 ticks, 8\.2 s$' "sim: the log says what is replayed"
check_screen sim '^       100:main$' "sim: the where pane has the recorded process and threads"
no_line sim 'demo: second' "sim: no output yet at 0.0 s"
keys sim 1
check_screen sim '^ Global search: 6 nodes, 0 true, 0 active, searching$' \
	"sim: the search pane at 0.0 s: the top-level nodes being enabled, none true"

keys sim '?'
check_screen sim 'hunch dashboard: keys' "?: the help"
check_screen sim '^replay: p play/pause  c next conclusion  g go to time  \+/- speed  e end$' \
	"?: and the replay's keys on the hint line under it"
keys sim x
keys sim c
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
keys sim 1 c
check_screen sim '^ demo +pid 100 +paused 1x +0:02\.4/0:08\.2 ' "c again: 2.4 s"
check_screen sim '^2\.4 s: CPUbound</Code/demo/demo\.c/main,/Process,/SyncObject,/Files> tested true$' \
	"c again: CPUbound at main became true"
check_screen sim '^     @T\* CPUbound  main .* 2\.4s$' \
	"c again: the search pane shows it, true since 2.4 s, under the whole program"
tap_ok $(grep -q '^ 1\. CPUbound: .* since 2\.4 s' "$TMP/sim.report"; echo $?) \
	"c again: the report gives that bottleneck the same time (since 2.4 s)"
keys sim g 1 . 5 Enter
check_screen sim '^ demo +pid 100 +paused 1x +0:01\.5/0:08\.2 ' "g 1.5 (back): 0:01.5"
check_screen sim '^     @[?.][*+ ] CPUbound  main ' "g 1.5: the search pane has CPUbound at main not concluded yet"
no_line sim '^     @T' "g 1.5: no refinement is true yet"
keys sim 6 6

keys sim g
check_screen sim '^go to time \(seconds or m:ss, Enter; Esc cancels\): _$' "g: asks for a time"
keys sim 5 . 5
check_screen sim '^go to time \(seconds or m:ss, Enter; Esc cancels\): 5\.5_$' "g: shows what is typed"
keys sim Enter
check_screen sim '^ demo +pid 100 +paused 1x +0:05\.5/0:08\.2 ' "g 5.5: the replay time is 0:05.5"
check_screen sim '^  demo: second 5$' "g 5.5: output up to 5 s in the log"
no_line sim 'demo: second 6' "g 5.5: none from 6 s"
check_screen sim '^! demo: warning at 3 s$' "g 5.5: the recorded stderr line, marked !"
check_screen sim '^# \+4\.8\) ' "g 5.5: the search's messages up to 4.8 s"
no_line sim '^# \+6\.0\) ' "g 5.5: and none from 6.0 s"
keys sim g 0 : 0 3 . 5 Enter
check_screen sim '^ demo +pid 100 +paused 1x +0:03\.5/0:08\.2 ' "g 0:03.5 (back): the replay time is 0:03.5"
check_screen sim '^  demo: second 3$' "g back: the log is rebuilt to 3.5 s: output of 3 s"
no_line sim 'demo: second [45]' "g back: the lines of 4 s and 5 s are gone"
no_line sim '^# \+(3\.6|4\.8)\) ' "g back: so are the search's later messages"
check_screen sim '^# replaying sim\.jsonl: 42 ticks, 8\.2 s$' "g back: the log starts again from the journal's first line"
keys sim g x y
check_screen sim '^go to time \(seconds or m:ss, Enter; Esc cancels\): _$' "g: letters are not taken"
keys sim Enter
check_screen sim '^go to time: nothing typed$' "g, Enter with nothing typed: says so"
keys sim g 1 : 7 5 Enter
check_screen sim "^go to time: '1:75' is not a time \(seconds, or m:ss\)$" "g 1:75: not a time"
keys sim g 1 Escape
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
check_screen sim '^the end of the journal: 8\.2 s \(p plays again\)$' "the hint says so"
check_screen sim '^# 21\. ExcessiveSyncWaitingTime</Code/demo/demo\.c/locker,' "the log lists the bottlenecks at the end (the 21st last)"

# --- the end: the bottlenecks are the --batch report's ------------------
TM kill-session -t sim
new_term end 139 70   # compact layout, lines wide enough for every focus
type_in end "cd $TMP && $HUNCH replay sim.jsonl; echo RC=\$?"
check_screen end '^ demo +pid 100 +paused 1x +0:00\.0/0:08\.2 ' "end: opens at 0:00.0 (139x70)"
keys end 4 e +
sleep 0.5
tap_ok $(status_line end | grep -Eq '^ demo +pid 100 +paused 1x +0:00\.0/0:08\.2 '; echo $?) \
	"in the Tunables pane e and + stay the pane's: the replay does not move, speed 1x"
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
# (CPU, sync and small writes concluded, 8 bottlenecks; tall and wide
# enough for the log pane to list them whole)
new_term demo 200 60
type_in demo "cd $TMP && $HUNCH replay demo.jsonl; echo RC=\$?"
check_screen demo '^ hunch-demo +pid [0-9]+ +paused 1x +0:00\.2/0:10\.2 ' \
	"demo: the live demo's journal opens at its first tick, 0:00.2 of 0:10.2"
keys demo c
check_screen demo '^ hunch-demo +pid [0-9]+ +paused 1x +0:01\.8/0:10\.2 ' "demo: c stops at 1.8 s"
check_screen demo '^1\.8 s: CPUbound</Code,/Process,/SyncObject,/Files> tested true$' \
	"demo: CPUbound became true there"
tap_ok $(grep -q '^ 1\. CPUbound: .* since 3\.0 s' "$TMP/demo.report"; echo $?) \
	"demo: the report's first bottleneck, refined from it, true since 3.0 s"
keys demo e 6 6
check_screen demo '^# end of the journal: 8 bottlenecks$' "demo: e: 8 bottlenecks at the end"
tap_eq "$(log_bottlenecks demo)" "$(report_bottlenecks "$TMP/demo.report")" \
	"demo: the same as hunch replay --batch's"
TM resize-window -t demo -x 80 -y 24
check_screen demo '^ hunch-demo +pid [0-9]+ +end 1x +0:10\.2/0:10\.2 ' "demo: resized to 80x24: the status line again"
tap_eq "$(screen demo | wc -l)" 24 "demo: resized: 24 lines"
keys demo C-c
check_screen demo '^RC=0$' "demo: Ctrl-C quits, status 0"
TM kill-session -t demo

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
keys bad 6 6 e c p g 1 Enter
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
