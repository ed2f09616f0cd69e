#!/bin/bash
# test-search.sh - the consultant's search in the dashboard, in tmux:
# `hunch` hunts the demo; the status line carries the search's fields;
# the Search pane fills in; a true node (ExcessiveSyncWaitingTime, which
# the demo makes true within seconds) is reached with the keys and its
# evidence opened; follow and back; filters; pause and resume (the graph
# stops growing); a new phase and its own search; the same screens under
# NO_COLOR, LANG=C and TERM=vt100 (letters, no colour, ASCII); quitting
# mid-search leaves the program running untraced with its code restored
# and its exact output; the journal is written.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
DEMO=$TARGETS_DIR/hunch-demo
TMP=$(mktemp -d)
SOCK=hunch-search-$$
export LC_ALL=C.UTF-8  # ${#line} counts characters, not bytes
export XDG_STATE_HOME=$TMP/state  # the journals
unset NO_COLOR

. "$HUNCH_SOURCE_ROOT/tests/tui/tmux-lib.sh"
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
status_line() { screen "$1" | sed -n 1p; }
pid_on_status() { status_line "$1" | sed -n 's/.* pid \([0-9]*\) .*/\1/p'; }
colours() { TM capture-pane -e -p -t "$1" | grep -Ec $'\e\\[[0-9;]*(3[0-7]|4[0-7]|38;5;[0-9]+|48;5;[0-9]+)[;m]'; }
non_ascii() { screen "$1" | LC_ALL=C grep -c $'[\x80-\xff]'; }
fits() {  # fits NAME W H TEST-NAME
	local s=$1 w=$2 h=$3 n=0 bad=0 line
	while IFS= read -r line; do
		n=$((n + 1))
		[ "${#line}" -le "$w" ] || bad=$((bad + 1))
	done < <(screen "$s")
	tap_ok $([ "$n" -eq "$h" ] && [ "$bad" -eq 0 ]; echo $?) \
		"$4: $h lines, none wider than $w (got $n lines, $bad too wide)"
}
# The node count in the Search pane's header.
nodes() { screen "$1" | sed -n 's/^ \(Global\|Phase [0-9]*\) search: \([0-9]*\) nodes.*/\2/p'; }

# log_has NAME ERE: the log, given the whole screen (6 6), has a line
# matching, looking back page by page from its end; then the Search pane
# again.  (The log strip of 80x24 is 6 lines: the search's messages can
# move a line out of it at any moment.)
log_has() {
	local i rc=1
	keys "$1" 6 6
	sleep 0.3
	for ((i = 0; i < 30; i++)); do
		if screen "$1" | grep -Eq -- "$2"; then rc=0; break; fi
		keys "$1" PPage
		sleep 0.1
	done
	keys "$1" End 1
	sleep 0.3
	return $rc
}

# to_node NAME FULL-NAME: from the top, j until the pane's last line
# (the cursor's node, in full) is FULL-NAME.
# Each j waits for the screen to change first (up to 3 s): under load
# a key pressed before the last one was drawn moved the cursor twice
# between two looks, past the node.
to_node() {
	local i t before
	keys "$1" g
	sleep 0.1
	# up to 250 rows down: with refinements starting early, CPUbound's
	# subtree above the node can hold over a hundred rows by then
	for ((i = 0; i < 250; i++)); do
		before=$(screen "$1")
		grep -qxF -- "$2" <<< "$before" && return 0
		keys "$1" j
		for ((t = 0; t < 60; t++)); do
			sleep 0.05
			[ "$(screen "$1")" != "$before" ] && break
		done
	done
	screen "$1" | sed 's/^/#  | /' >&2
	return 1
}
ESWT='ExcessiveSyncWaitingTime</Code,/Process,/SyncObject,/Files>'

# Code restored: every file's executable mapping in the program's memory
# equals the file (the demo, libc, ld.so, ...).  patched PID: the files
# whose mapping differs, or "unreadable".
patched() {
	local pid=$1 range perm off dev inode path start end n
	while read -r range perm off dev inode path; do
		[ "$perm" = r-xp ] && [ -f "$path" ] || continue
		start=$((16#${range%-*})); end=$((16#${range#*-}))
		n=$(((end - start) / 4096))
		dd if="/proc/$pid/mem" of="$TMP/mem" bs=4096 \
			skip=$((start / 4096)) count=$n 2>/dev/null
		dd if="$path" of="$TMP/file" bs=4096 \
			skip=$((16#$off / 4096)) count=$n 2>/dev/null
		[ -s "$TMP/mem" ] || { echo unreadable; return; }
		cmp -s "$TMP/mem" "$TMP/file" || echo "${path##*/}"
	done < "/proc/$pid/maps"
}

# --- `hunch` hunts the demo at 80x24 -----------------------------------
new_term demo 80 24
type_in demo "cd $TMP && $HUNCH; echo RC=\$?"
check_screen demo '^ hunch-demo +pid [0-9]+ +running' "demo: the status line names the target, its pid and 'running'"
WAIT=15 check_screen demo '^ hunch-demo +pid [0-9]+ .*\| [0-9]+Hz [0-9.]+%/5%( exp)? [0-9]+\+[0-9]+ (searching|slowed|idle)$' \
	"demo: the status line shows the sample rate, cost against the 5% limit, experiments and the search's state"
keys demo 1
check_screen demo '^ Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, (searching|slowed|idle|paused|ended)' \
	"demo: 1 shows the Search pane with the global search's counts"
check_screen demo '^  [T?.][*+: ] topLevelHypothesis  whole program ' "demo: the graph's root, the top-level hypothesis"
check_screen demo '^   >[TF?.x][*+: ] CPUbound  whole program ' "demo: CPUbound under it, marked '>' (a why-refinement)"
# Taller for these two: at 80x24 CPUbound's subtree, above it, can grow
# first and push the later top-level nodes below the pane's last row.
TM resize-window -t demo -x 80 -y 70
WAIT=15 check_screen demo '^   >T[*+: ] ExcessiveSyncWaitingTime  whole program +[█·|]{8} +[0-9.]+/0\.2 +[0-9.]+s$' \
	"demo: ExcessiveSyncWaitingTime is concluded true (T), with its bar, value/threshold and time"
WAIT=15 check_screen demo '^     @[TF?.x][*+: ] ExcessiveSyncWaitingTime  [A-Za-z_0-9:]+ ' \
	"demo: its where-refinements below it, marked '@', with short foci"
TM resize-window -t demo -x 80 -y 24
wait_screen demo '^ Global search: ' 5 >/dev/null
n1=$(nodes demo)
tap_ok $([ "${n1:-0}" -ge 5 ]; echo $?) "demo: the graph has grown ($n1 nodes)"
fits demo 80 24 "demo search pane"

tap_ok $(to_node demo "$ESWT"; echo $?) "demo: j reaches the true node; the pane's last line has its full name"
keys demo d
check_screen demo '^ T[*+: ] ExcessiveSyncWaitingTime: true, (active|inactive|queued)   \(d or Bksp: back\)$' \
	"detail: d opens the node's evidence: state in words"
check_screen demo '^ focus       </Code,/Process,/SyncObject,/Files>$' "detail: the full focus"
check_screen demo '^ value       [0-9.e+-]+   threshold 0\.2 \(PC_SyncThreshold\)$' "detail: value and threshold (0.2, PC_SyncThreshold)"
check_screen demo '^ hysteresis  [0-9.]+   guess (true|false), held [0-9.]+ s' "detail: hysteresis and how long the guess held"
check_screen demo '^ time true   since [0-9.]+ s \(for [0-9.]+ s\)$' "detail: time true"
check_screen demo '^ times       created [0-9.]+ s, last started [0-9.]+ s, concluded [0-9.]+ s$' "detail: created, last started, concluded"
check_screen demo '^ cost        estimated [0-9.]+%, charged [0-9.]+%; the search observes' "detail: estimated and observed cost"
check_screen demo '^ graph       why of topLevelHypothesis whole program; [0-9]+ children$' "detail: where it sits in the graph"
# An instance exists while the node is tested; stopped (to make room
# under the cost limit, shed, or at the program's end), the instances it
# had, released, with their history; never enabled, the metric it
# measures.
if screen demo | grep -q '^ instances   none now'; then
	check_screen demo '^ instances   none now \(not being tested\); it measures:$' "detail: no instance now, and it says so"
	check_screen demo '^             sync_wait, active_processes$' "detail: the metric it measures"
else
	check_screen demo '^ instances   #[0-9]+ sync_wait (enabling|enabled|released), last ' "detail: the metric instance behind it (released when the node was stopped)"
	check_screen demo '^             ([▁▂▃▄▅▆▇█ ]+|\(no samples yet\))$' "detail: its histogram as a sparkline"
fi
vdet=$(screen demo | sed -n 's/^ value       \([0-9.e+-]*\)   threshold.*/\1/p')
tap_ok $(awk -v v="$vdet" 'BEGIN { exit !(v + 0 > 0) }'; echo $?) "detail: the value is a measured number ($vdet)"
fits demo 80 24 "detail view"
keys demo BSpace
check_screen demo '^ Global search: ' "detail: Backspace goes back to the graph"

keys demo Enter
check_screen demo '^ Global search: .*\(followed; Bksp back\)' "follow: Enter follows the node (the header says so)"
check_screen demo '^  T[*+: ] ExcessiveSyncWaitingTime  whole program ' "follow: the node is the top of the view"
tap_eq "$(screen demo | grep -c 'topLevelHypothesis  whole')" 0 "follow: the rest of the graph is out of view"
keys demo BSpace
# The whole graph again: the header no longer says "followed" (its top
# may be scrolled off: the cursor stays on the node it followed).
wait_screen demo '^ Global search: ' 5 >/dev/null
WAIT=5 check_screen demo '^ Global search: [^(]*$' "follow: Backspace goes back to the whole graph"
tap_eq "$(screen demo | grep -cxF "$ESWT")" 1 "follow: the cursor is back on the node it followed"

# The filters on a taller terminal: at 80x24 the false nodes of a large
# graph can all be scrolled off around the cursor.
TM resize-window -t demo -x 80 -y 70
WAIT=15 check_screen demo '^ +[>@]F[*+: ] ' "filter: some node is false"
keys demo f
check_screen demo '^ Global search: .* -false$' "filter: f hides false nodes (the header says so)"
tap_eq "$(screen demo | grep -Ec '^ +[>@^]F[*+: ] ')" 0 "filter: no false node on screen"
keys demo f i
check_screen demo '^ Global search: .* -inactive$' "filter: i hides inactive nodes instead"
keys demo i
TM resize-window -t demo -x 80 -y 24
WAIT=20 check_screen demo '^ hunch-demo +pid [0-9]+ +exited 0 ' "demo: the program ends (exited 0)"
check_screen demo '^ Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, ended' "demo: the search has ended with it"
check_screen demo '\| [0-9]+Hz [0-9.]+%/5%( exp)? [0-9]+\+[0-9]+ ended$' "demo: the status line says ended"
keys demo q
wait_screen demo '^RC=[0-9][0-9]*$' 10 >/dev/null
tap_ok $(screen_all demo | grep -q '^RC=0$'; echo $?) "demo: hunch exits 0"
j=$(ls "$TMP"/state/hunch/journals/hunch-demo-*.jsonl 2>/dev/null | head -1)
tap_ok $([ -s "$j" ] && head -1 "$j" | grep -q '"mode": *"dashboard"'; echo $?) "demo: the journal was written, mode dashboard"
tap_ok $(tail -1 "$j" | grep -q 'target ended'; echo $?) "demo: it ends with the search's end"
tap_eq "$(jq -r 'select(.t == "output") | "\(.stream) \(.text)"' "$j" | tr '\n' '|')" \
	"stdout demo: 10 seconds, 4 lock workers, 1 writer|stdout demo done|" \
	"demo: the journal holds the program's output lines, in order"
tap_ok $(screen_all demo | grep -qF "hunch: journal $j"; echo $?) "demo: hunch names the journal when it leaves"

# --- pause, phase, quit mid-search: a longer demo -----------------------
new_term run 80 24
type_in run "cd $TMP && $HUNCH run -- $DEMO --seconds 30; echo RC=\$?"
check_screen run '^ hunch-demo +pid [0-9]+ +running' "run: the demo runs in the dashboard"
RPID=$(pid_on_status run)
keys run 1
# On 80x24 CPUbound's subtree (its refinements start before it
# concludes) can fill the pane above the sync row: fold it, as a user
# would, once it has a row below it to fold (the cursor starts on the
# top row; Down is CPUbound's).
WAIT=15 wait_screen run '^     @' 15 > /dev/null
keys run Down Left
WAIT=15 check_screen run '^   >T[*+: ] ExcessiveSyncWaitingTime  whole program ' "run: the search finds ExcessiveSyncWaitingTime"
keys run p
check_screen run '^ Global search: .*, paused$' "pause: p pauses the search (the pane says so)"
check_screen run '\| [0-9]+Hz [0-9.]+%/5%( exp)? [0-9]+\+[0-9]+ paused$' "pause: the status line says paused"
tap_ok $(log_has run '^# \+[0-9.]+\) Search for the global phase paused\.$'; echo $?) "pause: the log says so"
p1=$(nodes run); sleep 2.5; p2=$(nodes run)
tap_ok $([ -n "$p1" ] && [ "$p1" = "$p2" ]; echo $?) "pause: the node count stops changing ($p1, then $p2)"
keys run p
check_screen run '^ Global search: .*, (searching|slowed|idle)$' "resume: p again resumes it"
check_screen run '\| [0-9]+Hz [0-9.]+%/5%( exp)? [0-9]+\+[0-9]+ (searching|slowed|idle)$' "resume: the status line follows"
keys run P
check_screen run '^ Phase 1 search: [0-9]+ nodes' "phase: P starts a phase, and the pane shows its search"
tap_ok $(log_has run '^# \+[0-9.]+\) Search for Phase 1 \(phase\) started\.$'; echo $?) "phase: the log says so"
WAIT=15 check_screen run '^   >[TF?.x][*+: ] ExcessiveSyncWaitingTime  whole program ' "phase: the phase's search has its own nodes"
keys run c
check_screen run '^ Global search: [0-9]+ nodes' "phase: c switches to the global search"
keys run c
check_screen run '^ Phase 1 search: ' "phase: and back to the phase's"
fits run 80 24 "phase search"
cs=$(patched "$RPID" | sort -u | tr '\n' ' ')
tap_ok $([ -n "$cs" ] && [ "$cs" != "unreadable " ]; echo $?) \
	"quit: mid-search the program's code is patched (differs from the file in: $cs)"
keys run q
check_screen run '^Detach from hunch-demo' "quit: q asks"
keys run y
check_screen run 'its output follows until it ends' "quit: y detaches; hunch passes the output on"
sleep 0.5
tap_eq "$(awk '/^TracerPid:/ {print $2}' "/proc/$RPID/status")" 0 "quit: the demo is no longer traced"
st=$(awk '{print $3}' "/proc/$RPID/stat")
tap_ok $([ "$st" != t ] && [ "$st" != T ]; echo $?) "quit: and not stopped (state $st)"
cs=$(patched "$RPID" | sort -u | tr '\n' ' ')
tap_eq "$cs" "" "quit: its code is restored: every executable mapping equals its file"
WAIT=40 check_screen run '^RC=0$' "quit: hunch returns the program's exit status (0) when it ends"
got=$(screen_all run | sed -n '/its output follows until it ends/,/^RC=/p' | sed '1d;$d')
tap_eq "$got" "demo done" "quit: the rest of the demo's output follows on the terminal, exactly"
j=$(ls -t "$TMP"/state/hunch/journals/*.jsonl | head -1)
tap_eq "$(grep '"t":"action"' "$j" | sed 's/"ts":[0-9.]*,//' | tr '\n' ' ')" \
	'{"t":"action","action":"pause","phase":0} {"t":"action","action":"resume","phase":0} {"t":"action","action":"phase_start","name":"phase","phase":1} {"t":"action","action":"quit"} ' \
	"journal: the user's pause, resume, phase and quit, in order"
tap_ok $(tail -1 "$j" | grep -q '"reason":"detached"'; echo $?) "journal: it ends 'detached'"

# --- NO_COLOR, LANG=C, TERM=vt100 ----------------------------------------
plain() {  # plain NAME ENV...: the demo, search pane, a true node's detail
	local s=$1; shift
	new_term "$s" 80 24
	type_in "$s" "cd $TMP && env $* $HUNCH run -- $DEMO --seconds 30; echo RC=\$?"
	wait_screen "$s" '^ hunch-demo +pid [0-9]+ +running' 10 >/dev/null
	keys "$s" 1
	# (taller while the true node is looked at: CPUbound's subtree can
	# push it below an 80x24 pane; the caller goes back with short_term)
	TM resize-window -t "$s" -x 80 -y 70
	wait_screen "$s" '^   >T. ExcessiveSyncWaitingTime  whole program ' 15 >/dev/null
}
short_term() {
	TM resize-window -t "$1" -x 80 -y 24
	wait_screen "$1" '^ Global search: ' 5 >/dev/null
}
end_plain() {
	keys "$1" q; wait_screen "$1" 'Detach from' 5 >/dev/null; keys "$1" y
	wait_screen "$1" 'its output follows' 5 >/dev/null
	kill -TERM "$2" 2>/dev/null
	wait_screen "$1" '^RC=[0-9][0-9]*$' 10 >/dev/null
}

plain mono NO_COLOR=1
MPID=$(pid_on_status mono)
check_screen mono '^   >T[*+: ] ExcessiveSyncWaitingTime  whole program ' "NO_COLOR: the true node is marked T"
# at once, while it is on screen (the graph grows and scrolls)
tap_ok $(TM capture-pane -e -p -t mono | grep 'ExcessiveSyncWaitingTime  whole' | grep -Eq $'\e\\[([0-9;]*;)?1(;[0-9;]*)?m'; echo $?) "NO_COLOR: the true node is in bold (SGR 1, alone or with reverse video)"
# (still taller: with most CPUbound refinements true, the false nodes can
# all be below the first screenful, as for the filters above)
WAIT=15 check_screen mono '^ +[>@]F[*+: ] [A-Za-z]+  ' "NO_COLOR: a false one F"
tap_eq "$(colours mono)" 0 "NO_COLOR: no colour at all on the screen"
TM resize-window -t mono -x 80 -y 24
wait_screen mono '^ Global search: ' 5 >/dev/null
tap_ok $(to_node mono "$ESWT"; echo $?) "NO_COLOR: j reaches the true node"
keys mono d
check_screen mono '^ value       [0-9.e+-]+   threshold 0\.2 \(PC_SyncThreshold\)$' "NO_COLOR: its detail"
fits mono 80 24 "NO_COLOR detail"
end_plain mono "$MPID"

plain ascii LC_ALL=C LANG=C
APID=$(pid_on_status ascii)
check_screen ascii '^   >T[*+: ] ExcessiveSyncWaitingTime  whole program +[#.|]{8} ' "LANG=C: rows with an ASCII bar (#, ., |)"
tap_eq "$(non_ascii ascii)" 0 "LANG=C: no byte >= 0x80 in the search pane"
short_term ascii
tap_ok $(to_node ascii "$ESWT"; echo $?) "LANG=C: j reaches the true node"
keys ascii d
check_screen ascii '^             [_.=+*#@ -]+$' "LANG=C: the sparkline in ASCII"
tap_eq "$(non_ascii ascii)" 0 "LANG=C: no byte >= 0x80 in the detail"
keys ascii '?'
check_screen ascii 'Search: Enter follow, Bksp back' "LANG=C: ? lists the Search pane's keys"
tap_eq "$(non_ascii ascii)" 0 "LANG=C: the help is ASCII"
keys ascii x
end_plain ascii "$APID"

plain vt TERM=vt100
VPID=$(pid_on_status vt)
check_screen vt '^ hunch-demo +pid [0-9]+ .*\| [0-9]+Hz' "TERM=vt100: the status line with the search's fields"
check_screen vt '^   >T[*+: ] ExcessiveSyncWaitingTime  whole program ' "TERM=vt100: the true node marked T"
tap_eq "$(colours vt)" 0 "TERM=vt100: no colour (it has none)"
short_term vt
fits vt 80 24 "TERM=vt100"
end_plain vt "$VPID"

# --- resizes with a paused search: no garbage ----------------------------
# A paused search evaluates nothing, so the screen holds still and must
# equal what a full repaint (Ctrl-L) draws; row 1 (the clock) is left out.
clean_screen() {  # clean_screen NAME TEST-NAME
	local s=$1 a b i
	for i in 1 2 3; do
		a=$(screen "$s" | tail -n +2)
		keys "$s" C-l
		sleep 0.4
		b=$(screen "$s" | tail -n +2)
		[ "$a" = "$b" ] && break
	done
	tap_eq "$a" "$b" "$2: the screen is what a full repaint draws"
}
new_term rs 200 60
type_in rs "cd $TMP && $HUNCH run -- $DEMO --seconds 30; echo RC=\$?"
WAIT=15 check_screen rs '│   >T[*+: ] ExcessiveSyncWaitingTime  whole program ' "resize: the search at 200x60"
RSPID=$(pid_on_status rs)
keys rs 1 p
check_screen rs '│ Global search: .*, paused$' "resize: paused"
sleep 1
clean_screen rs "resize: paused search at 200x60"
TM resize-window -t rs -x 80 -y 24
wait_screen rs '^\[1 Search\]' 5 >/dev/null
fits rs 80 24 "resize to 80x24"
clean_screen rs "resize: paused search at 80x24"
TM resize-window -t rs -x 200 -y 60
sleep 0.5
fits rs 200 60 "resize back to 200x60"
clean_screen rs "resize: paused search back at 200x60"
end_plain rs "$RSPID"

# --- wide: the where axis and the search side by side --------------------
new_term wide 160 44
type_in wide "cd $TMP && $HUNCH run -- $DEMO --seconds 30; echo RC=\$?"
# (it has the keyboard from the start: its title is not ruled)
WAIT=15 check_screen wide '^ 2 Where ─+ [0-9]+ resources │ 1 Search$' "160x44: the Search pane beside the where axis"
# The layout is what this checks: the row in whatever state the search
# has reached (the resize case above waits for it to be true; under a
# loaded CI the wide case's 15 s once ran out before it was concluded).
WAIT=15 check_screen wide '│   >[TF?.][*+: ] ExcessiveSyncWaitingTime  whole program ' "160x44: with its rows"
WPID=$(pid_on_status wide)
end_plain wide "$WPID"
tap_done
