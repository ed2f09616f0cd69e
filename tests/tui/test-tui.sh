#!/bin/bash
# test-tui.sh - the dashboard end to end, in tmux (which gives it a
# terminal even under CI=true with none of its own): the demo at 80x24,
# the where pane (search, fold, focus), help, quitting a live session
# (detach: the program runs on untraced with its exact output), job
# control, resizes without garbage, NO_COLOR, LANG=C, several TERMs,
# screenshots, and the terminal restored afterwards.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
. "$HUNCH_SOURCE_ROOT/tests/targets/cases.sh"
SRC=$HUNCH_SOURCE_ROOT/tests/targets
THREADS=$TARGETS_DIR/threads-O2-pie
DEMO=$TARGETS_DIR/hunch-demo
TMP=$(mktemp -d)
SOCK=hunch-tui-$$
export LC_ALL=C.UTF-8  # ${#line} counts characters, not bytes
export XDG_STATE_HOME=$TMP/state  # the search's journals
unset NO_COLOR

# exit-empty off: the server stays between one test's window and the next
printf 'set -g default-terminal tmux-256color\nset -g history-limit 5000\nset -s exit-empty off\n' >"$TMP/tmux.conf"
TM() { tmux -L "$SOCK" -f "$TMP/tmux.conf" "$@"; }
trap 'TM kill-server 2>/dev/null; kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT

# new_term NAME W H: a shell in a fresh tmux window of W x H
new_term() {
	TM new-session -d -s "$1" -x "$2" -y "$3" \
		"env PS1='tui\$ ' LANG=C.UTF-8 bash --norc --noprofile"
	wait_screen "$1" 'tui\$' 5
}
type_in() { TM send-keys -t "$1" -l "$2"; TM send-keys -t "$1" Enter; }
keys() { local s=$1; shift; TM send-keys -t "$s" "$@"; }
screen() { TM capture-pane -p -t "$1"; }
screen_all() { TM capture-pane -p -J -S - -t "$1"; }

# wait_screen NAME ERE [SECONDS]: until the screen has a line matching
wait_screen() {
	local i n=$(( ${3:-10} * 20 ))
	for ((i = 0; i < n; i++)); do
		screen "$1" | grep -Eq -- "$2" && return 0
		sleep 0.05
	done
	echo "# timed out waiting for /$2/ on $1:" >&2
	screen "$1" | sed 's/^/#  | /' >&2
	return 1
}
# wait_gone_screen NAME ERE [SECONDS]: until no line matches
wait_no_screen() {
	local i n=$(( ${3:-10} * 20 ))
	for ((i = 0; i < n; i++)); do
		screen "$1" | grep -Eq -- "$2" || return 0
		sleep 0.05
	done
	return 1
}
check_screen() {  # check_screen NAME ERE TEST-NAME...: failing, the screen
	local s=$1 re=$2 dump rc; shift 2
	dump=$(wait_screen "$s" "$re" "${WAIT:-10}" 2>&1 >/dev/null)
	rc=$?
	tap_ok $rc "$*"
	[ $rc -eq 0 ] || printf '%s\n' "$dump"
}

# The status line (row 1), the where pane's detail line, ...
row() { screen "$1" | sed -n "$2p"; }
status_line() { row "$1" 1; }

# Every line fits the width and the screen has exactly H lines.
fits() {  # fits NAME W H TEST-NAME
	local s=$1 w=$2 h=$3 n=0 bad=0 line
	while IFS= read -r line; do
		n=$((n + 1))
		[ "${#line}" -le "$w" ] || bad=$((bad + 1))
	done < <(screen "$s")
	tap_ok $([ "$n" -eq "$h" ] && [ "$bad" -eq 0 ]; echo $?) \
		"$4: $h lines, none wider than $w (got $n lines, $bad too wide)"
}

# settle NAME: until the screen below the status line has stayed the
# same over three captures 0.1 s apart (at most 10 s).  A loaded machine
# can take longer than any fixed sleep to draw; this waits for the draw
# to end instead of guessing how long it takes.
settle() {
	local prev cur i same=0
	prev=$(screen "$1" | tail -n +2)
	for ((i = 0; i < 100 && same < 2; i++)); do
		sleep 0.1
		cur=$(screen "$1" | tail -n +2)
		if [ "$cur" = "$prev" ]; then
			same=$((same + 1))
		else
			same=0
		fi
		prev=$cur
	done
}

# No garbage: what is on screen equals what a full repaint (Ctrl-L)
# draws.  Both captures are taken once the screen has settled; the
# status line's clock may tick in between, so row 1 is left out.
# The program runs on meanwhile (a paused search still shows its new
# threads): a pair that differs is taken again, up to 3 times; garbage
# left by a partial redraw would differ every time.
clean_screen() {  # clean_screen NAME TEST-NAME
	local s=$1 a b i
	for i in 1 2 3; do
		settle "$s"
		a=$(screen "$s" | tail -n +2)
		keys "$s" C-l
		settle "$s"
		b=$(screen "$s" | tail -n +2)
		[ "$a" = "$b" ] && break
	done
	tap_eq "$a" "$b" "$2: the screen is what a full repaint draws"
}

# The same in a session with a live search, whose values and log lines
# may change between a capture and the repaint: paused (pane 1, p), it
# launches and evaluates nothing, so the where pane (2) must be equal
# exactly; then the search is resumed.
clean_screen_paused() {  # clean_screen_paused NAME TEST-NAME
	keys "$1" 1
	# (a key typed while the dashboard comes back from fg can be
	# flushed with the typeahead: press it again if the pane is not up)
	wait_screen "$1" '^ Global search: ' 5 >/dev/null 2>&1 || keys "$1" 1
	# (p before the search exists does nothing: wait for it to run)
	wait_screen "$1" '^ Global search: .*, (searching|slowed|idle)$' 15 >/dev/null
	keys "$1" p
	check_screen "$1" '^ Global search: .*, paused$' "$2: p pauses the search before the repaint check"
	keys "$1" 2
	clean_screen "$1" "$2 (search paused)"
	keys "$1" 1
	keys "$1" p
	tap_ok $(wait_no_screen "$1" ', paused$' 10; echo $?) "$2: p again resumes the search"
	keys "$1" 2
}

# log_has NAME ERE: a line of the full log pane (6) matches, page by
# page back from the end; then back to the end and the where pane.  The
# 80x24 log strip under the where pane scrolls as the live search logs,
# so a line can be gone from it before a loaded machine captures it.
log_has() {
	local i rc=1
	# (the line may not be written yet: wait for it on the strip first,
	# where it shows unless the search's lines pushed it off)
	wait_screen "$1" "$2" 10 >/dev/null 2>&1
	keys "$1" 6
	wait_screen "$1" '\[6 Log\]' 10 >/dev/null
	settle "$1"
	for ((i = 0; i < 30; i++)); do
		if screen "$1" | grep -Eq -- "$2"; then rc=0; break; fi
		keys "$1" PPage
		settle "$1"
	done
	keys "$1" End 2
	wait_screen "$1" '\[2 Where\]' 10 >/dev/null
	return $rc
}

tracer_of() { awk '/^TracerPid:/ {print $2}' "/proc/$1/status"; }
state_of() { awk '{print $3}' "/proc/$1/stat"; }
untouched() {  # untouched PID NAME
	local t s
	t=$(tracer_of "$1") s=$(state_of "$1")
	tap_ok $([ "$t" = 0 ] && [ "$s" != t ] && [ "$s" != T ]; echo $?) \
		"$2: not traced (tracer $t) and not stopped (state $s)"
}
restored() {  # restored NAME TEST-NAME: the shell has the terminal back
	local m
	wait_screen "$1" '^RC=[0-9][0-9]*$' 30 >/dev/null 2>&1
	m=$(TM display -p -t "$1" '#{alternate_on} #{cursor_flag} #{keypad_cursor_flag} #{mouse_any_flag}')
	tap_eq "$m" "0 1 0 0" "$2: terminal restored (no alternate screen, cursor on, no keypad or mouse mode)"
}
pid_on_status() { status_line "$1" | sed -n 's/.* pid \([0-9]*\) .*/\1/p'; }

# --- the demo at 80x24 ---------------------------------------------
new_term demo 80 24
type_in demo "cd $TMP && $HUNCH; echo RC=\$?"
check_screen demo '^ hunch-demo +pid [0-9]+ +running' "demo: the status line names the target, its pid and 'running'"
DPID=$(pid_on_status demo)
tap_eq "$(cat /proc/$DPID/comm 2>/dev/null)" hunch-demo "demo: the pid on the status line is the demo's ($DPID)"
WAIT=15 check_screen demo '^ hunch-demo +pid [0-9]+ .*\| [0-9]+Hz [0-9.]+%/5%( exp)? [0-9]+\+[0-9]+ [a-z]+$' \
	"demo: the status line shows the search's sample rate, cost against the limit, experiments and state"
check_screen demo '^\[1 Search\]  2 Where   3 Histograms' "demo: the dashboard opens on the Search pane"
check_screen demo '^ Findings ─' "demo: with the findings strip under it"
keys demo 2
check_screen demo '^ 1 Search  \[2 Where\]' "demo: 2 shows the where pane"
tap_ok $(screen demo | grep -A12 '▾ demo.c$' | grep -q '^         demo_hot_loop$'; echo $?) \
	"demo: the where pane shows demo_hot_loop under demo.c"
check_screen demo '^ *6 Log ─' "demo: the log pane is on screen at 80x24"
keys demo End
check_screen demo '^       [0-9]+:demo_worker$' "demo: worker threads appear in the where pane while it runs"
# (a thread is named by its start routine once it runs it: under load
# the last ones can take a moment, so wait for all four)
for ((i = 0; i < 100; i++)); do
	nw=$(screen demo | grep -Ec '^       [0-9]+:demo_worker$')
	[ "$nw" -ge 4 ] && break
	sleep 0.1
done
tap_eq "$nw" 4 "demo: all four workers (demo_worker) are listed"
fits demo 80 24 "demo while running"
WAIT=20 check_screen demo '^ hunch-demo +pid [0-9]+ +exited 0 ' "demo: after it ends the status says 'exited 0'"
keys demo 6 6  # the log gets the whole body
check_screen demo '^ 6 Log ' "demo: 6 twice gives the log the whole screen"
# the search's last messages can follow the program's last line by more
# than a page under load: page back (PgUp) until it shows
for ((i = 0; i < 20; i++)); do
	wait_screen demo '^  demo done$' 1 >/dev/null 2>&1 && break
	keys demo PPage
done
check_screen demo '^  demo done$' "demo: 'demo done' appears in the output pane"
keys demo g  # the search's messages follow: the first lines are at the top
check_screen demo '^  demo: 10 seconds, 4 lock workers, 1 writer' "demo: its stdout is in the output pane"
# (the writer, named once it runs its start routine, can come after a
# page of the search's messages under load: the workers come first)
check_screen demo '^# thread [0-9]+:demo_worker appeared' "demo: hunch's messages are in the log, marked #"
keys demo G
# (the log may name demo_hot_loop, where the search concluded CPU; the
# where pane's tree lines are what must be gone)
tap_ok $(screen demo | grep -qE '▾ demo\.c$|^ +demo_hot_loop$'; [ $? -ne 0 ]; echo $?) "demo: (and the where pane is gone)"
keys demo 2
check_screen demo '^ 1 Search  \[2 Where\]' "demo: 2 brings the where pane back"
nw=$(screen demo | grep -Ec ':demo_worker$')
tap_eq "$nw" 0 "demo: exited threads leave the where pane"
nm=$(screen demo | grep -Ec '^ +[0-9]+:main$')
tap_eq "$nm" 0 "demo: and so does the process with its main thread, once it has ended"
keys demo q
restored demo "demo"
out_on_tty=$(screen_all demo | grep -c 'demo done')
tap_eq "$out_on_tty" 0 "demo: the program's output never reached the terminal itself"
tap_ok $(screen_all demo | grep -q '^hunch: hunch-demo (pid [0-9]*) exited with status 0$'; echo $?) \
	"demo: after the dashboard, hunch says how the program ended"
tap_ok $(screen_all demo | grep -qx 'RC=0'; echo $?) "demo: q after the end quits at once, status 0"
TM kill-session -t demo

# --- where pane: search, fold, focus, help; q asks, y detaches ---------
new_term run 80 24
type_in run "cd $TMP && $HUNCH run -- $THREADS --threads 3 --wait-file $TMP/wf1; echo RC=\$?"
check_screen run '^ threads-O2-pie +pid [0-9]+ +running' "run: the status line shows threads-O2-pie running"
RPID=$(pid_on_status run)
tap_ok $(log_has run '^! ready$'; echo $?) "run: the program's stderr is in the log, marked !"
keys run /
type_in run mt_incr
check_screen run '^/Code/threads-O2-pie/threads.c/mt_increment  \[function at 0x[0-9a-f]+\]$' \
	"run: / finds mt_increment and selects it (detail line)"
keys run f
check_screen run '^ focus .*/threads.c/mt_increment,/Process,/SyncObject,/Files>$' \
	"run: f puts it in the focus (focus line)"
check_screen run '^● +mt_increment$' "run: the where pane marks the focus"
keys run h
check_screen run '^/Code/threads-O2-pie/threads.c  \[source file\]$' "run: h (left) goes up to threads.c"
keys run Enter
check_screen run '^     ▸ threads.c \([0-9]+\)$' "run: Enter closes threads.c"
tap_ok $(screen run | grep -q 'mt_increment$'; [ $? -ne 0 ]; echo $?) "run: and its functions are hidden"
keys run Space
check_screen run '^     ▾ threads.c$' "run: Space opens it again"
check_screen run 'mt_increment$' "run: its functions are back"
keys run / ; type_in run malloc
check_screen run '^/Code/lib[^ ]*/[^/ ]*malloc' "run: / finds a function inside a closed library"
first=$(screen run | grep '\[function at' )
keys run n
# (until the selected match changes: a loaded machine may take longer
# than any fixed sleep to redraw)
for ((i = 0; i < 100; i++)); do
	second=$(screen run | grep '\[function at' )
	[ "$second" != "$first" ] && break
	sleep 0.1
done
tap_ok $([ -n "$second" ] && [ "$first" != "$second" ] && echo "$second" | grep -q malloc; echo $?) \
	"run: n goes to the next match ($second)"
keys run N
for ((i = 0; i < 100; i++)); do
	[ "$(screen run | grep '\[function at')" = "$first" ] && break
	sleep 0.1
done
tap_eq "$(screen run | grep '\[function at')" "$first" "run: N goes back to the previous one"
keys run '?'
check_screen run 'hunch dashboard: keys' "run: ? shows the keys"
check_screen run 'any (other )?key closes' "run: the help says how to close it"
fits run 80 24 "run with help"
keys run x
tap_ok $(wait_no_screen run 'hunch dashboard: keys' 5; echo $?) "run: any key closes the help"
keys run 1
WAIT=15 check_screen run '^ Global search: [0-9]+ nodes' "run: the search pane shows the search history graph"
keys run 2
keys run S
check_screen run 'screen saved to hunch-screen-1.txt' "run: S saves the screen"
sleep 0.3
# (rows 2-15: the clock on row 1 and the log below, which the search's
# messages keep moving, may change between the two)
tap_eq "$(sed -n 2,15p "$TMP/hunch-screen-1.txt")" "$(screen run | sed -n 2,15p)" \
	"run: the screenshot has the screen's text"
kill -STOP "$RPID"
check_screen run '^ threads-O2-pie +pid [0-9]+ +stopped ' "run: SIGSTOP to the program: the status says stopped"
kill -CONT "$RPID"
check_screen run '^ threads-O2-pie +pid [0-9]+ +running ' "run: SIGCONT: running again"
keys run C-z
check_screen run 'Stopped' "run: Ctrl-Z suspends hunch (the shell has the terminal)"
tap_eq "$(TM display -p -t run '#{alternate_on}')" 0 "run: suspended: the terminal is in its normal mode"
untraced_state=$(state_of "$RPID")
type_in run fg
check_screen run '^ threads-O2-pie +pid [0-9]+ +running ' "run: fg brings the dashboard back"
clean_screen_paused run "run after fg"
keys run C-c
check_screen run '^Detach from threads-O2-pie \(pid [0-9]+\)' "run: Ctrl-C asks the same (it reaches hunch alone, as a key)"
keys run Escape
check_screen run '^ threads-O2-pie +pid [0-9]+ +running ' "run: any other answer keeps watching"
st=$(state_of $RPID)
tap_ok $([ "$st" = S ] || [ "$st" = R ]; echo $?) "run: the program did not see the Ctrl-C (still running: state $st)"
keys run q
check_screen run '^Detach from threads-O2-pie \(pid [0-9]+\) and leave it running\? y/n' "run: q on a live session asks first"
keys run n
check_screen run '^ threads-O2-pie +pid [0-9]+ +running ' "run: n keeps watching"
keys run q
wait_screen run 'Detach from' 5 >/dev/null
keys run y
wait_screen run 'its output' 5 >/dev/null
tap_ok $(screen_all run | grep -q "^hunch: detached from threads-O2-pie (pid $RPID); its output follows until it ends$"; echo $?) \
	"run: y detaches and leaves the dashboard"
sleep 0.2
untouched "$RPID" "run: after the detach the program"
tap_ok $(grep -q libhunchrt.so "/proc/$RPID/maps"; echo $?) "run: (the runtime library stays loaded in it)"
touch "$TMP/wf1"
# (Ctrl-Z let the shell run "echo RC" already: ask for the status again)
wait_screen run '^consumed: ' 20 >/dev/null
sleep 0.3
type_in run 'echo RC2=$?'
wait_screen run '^RC2=' 5 >/dev/null
got=$(screen_all run | sed -n '/its output follows until it ends/,/^tui\$/p' | sed '1d;$d')
tap_eq "$got" "$(cat "$SRC/threads-wait.expected-out")" "run: the program finishes with its exact output"
tap_ok $(screen_all run | grep -qx 'RC2=0'; echo $?) "run: hunch passes on its exit status 0"
restored run "run"
TM kill-session -t run

# --- libraries appear and leave; the log scrolls (Tab, PgUp, Home, End) --
new_term dl 80 24
# (--no-rtlib here and below: no search, whose messages would scroll the
# log lines these checks look for; test-search.sh tests the search)
type_in dl "$HUNCH run --no-rtlib -- $TARGETS_DIR/dlopen-O2-pie --wait-file $TMP/dlw; echo RC=\$?"
check_screen dl '^! waiting for load$' "dlopen: the program waits (its stderr in the log)"
tap_ok $(screen dl | grep -q 'libtgtplugin'; [ $? -ne 0 ]; echo $?) "dlopen: the plugin is not in the where pane yet"
touch "$TMP/dlw"
check_screen dl '^# library libtgtplugin.so loaded \(8 functions\)$' "dlopen: the log says the plugin was loaded, with its 8 functions"
keys dl /; type_in dl libtgt
check_screen dl '^   ▸ libtgtplugin.so \(8 functions\)$' "dlopen: / finds it in the where pane (closed, a library)"
check_screen dl '^! waiting for unload$' "dlopen: then the program waits to unload it"
touch "$TMP/dlw.2"
check_screen dl '^# library libtgtplugin.so unloaded$' "dlopen: the log says it was unloaded"
tap_ok $(wait_no_screen dl 'libtgtplugin.so \(' 5; echo $?) "dlopen: and it leaves the where pane"
keys dl r
check_screen dl '^   ▸ libtgtplugin.so \(unloaded\)$' "dlopen: r shows retired resources: the plugin, unloaded"
keys dl r
WAIT=15 check_screen dl '^ dlopen-O2-pie +pid [0-9]+ +exited 0 ' "dlopen: exited 0"
TM kill-session -t dl

new_term sc 80 24
# (--no-rtlib: no search, whose messages would move the log's end)
type_in sc "$HUNCH run --no-rtlib -- /bin/sh -c 'i=0; while [ \$i -lt 300 ]; do i=\$((i+1)); echo \"line \$i\"; done; while [ ! -e $TMP/scw ]; do sleep 0.05; done'; echo RC=\$?"
check_screen sc '^  line 300$' "scroll: 300 lines of output; the log follows the end"
keys sc Tab
check_screen sc 'PgUp/PgDn page' "scroll: Tab gives the log the keyboard (its keys in the hint)"
keys sc PPage
check_screen sc ' [0-9]+ more below \(End\)$' "scroll: PgUp scrolls back (the title says how much is below)"
tap_ok $(screen sc | grep -q '^  line 300$'; [ $? -ne 0 ]; echo $?) "scroll: the last line is out of view"
keys sc k
check_screen sc ' 6 more below \(End\)$' "scroll: k one more line up"
keys sc Home
check_screen sc '^  line 1$' "scroll: Home shows the first lines"
check_screen sc '^# launched sh' "scroll: (hunch's first message above them)"
keys sc End
check_screen sc '^  line 300$' "scroll: End follows the end again"
check_screen sc ' 30[0-9] lines$' "scroll: the title counts the lines"
touch "$TMP/scw"
check_screen sc '^ sh +pid [0-9]+ +exited 0 ' "scroll: the program ends"
keys sc q
restored sc "scroll"
TM kill-session -t sc

# --- what the program prints cannot reach the terminal ---------------------
cat >"$TMP/evil.sh" <<'EOS'
printf '\033[2J\033[H\033[31mEVIL\a\033]0;title\007\n'
printf 'accent: caf\303\251\n'
printf 'bad bytes: \377\376\n' >&2
while [ ! -e "$1" ]; do sleep 0.05; done
EOS
new_term ev 80 24
# --no-follow: the loop forks a sleep every 50 ms, and followed
# children come and go in the where pane faster than two captures
type_in ev "$HUNCH run --no-rtlib --no-follow -- /bin/sh $TMP/evil.sh $TMP/evw; echo RC=\$?"
check_screen ev '^  \?\[2J\?\[H\?\[31mEVIL\?\?]0;title\?$' "output: escape sequences and control bytes show as '?' in the log"
check_screen ev '^  accent: café$' "output: UTF-8 text shows as it is"
check_screen ev '^! bad bytes: \?\?$' "output: invalid UTF-8 shows as '?' (stderr, marked !)"
tap_ok $(status_line ev | grep -Eq '^ sh +pid [0-9]+ +running'; echo $?) "output: the status line is untouched"
clean_screen ev "output with escape sequences"
touch "$TMP/evw"
check_screen ev '^ sh +pid [0-9]+ +exited 0 ' "output: the program ends"
keys ev q
restored ev "output with escape sequences"
TM kill-session -t ev

# --- SIGTERM to hunch: detach, leave, and the output still arrives ------
new_term term 80 24
type_in term "$HUNCH run -- $THREADS --threads 3 --wait-file $TMP/wf3; echo RC=\$?"
check_screen term '^ threads-O2-pie +pid [0-9]+ +running' "SIGTERM: the dashboard runs"
TPID=$(pid_on_status term)
HPID=$(tracer_of "$TPID")
kill -TERM "$HPID"
wait_screen term '^RC=[0-9][0-9]*$' 10 >/dev/null
tap_ok $(screen_all term | grep -q "^hunch: Terminated: detached from threads-O2-pie (pid $TPID), which runs on; its output still comes here$"; echo $?) \
	"SIGTERM: hunch detaches, leaves the dashboard and says so"
tap_ok $(screen_all term | grep -qx 'RC=143'; echo $?) "SIGTERM: hunch exits 128+15"
untouched "$TPID" "SIGTERM: the program"
restored term "SIGTERM"
touch "$TMP/wf3"
wait_screen term '^consumed: ' 20 >/dev/null
# (the shell's prompt came first: the output starts on its line)
got=$(screen_all term | sed -n '/^RC=143/,$p' | sed '1d;s/^tui\$ //;/^$/d')
tap_eq "$got" "$(cat "$SRC/threads-wait.expected-out")" "SIGTERM: the program finishes with its exact output, passed on after hunch left"
TM kill-session -t term

# --- attach; q y detaches; the program's own output is exact ------------
"$THREADS" --threads 3 --wait-file "$TMP/wf2" >"$TMP/t2.out" 2>"$TMP/t2.err" &
APID=$!
tgt_wait_line "$TMP/t2.err" ready
new_term att 80 24
type_in att "$HUNCH attach --screenshot $TMP/att.txt $APID; echo RC=\$?"
NT=$(ls /proc/$APID/task | wc -l)
check_screen att "^ threads-O2-pie +pid $APID +running +[0-9:]+ +$NT threads" "attach: the status line shows the process and its $NT threads"
check_screen att "^# attached to threads-O2-pie \\(pid $APID\\)" "attach: the log says so"
tap_eq "$(cat /proc/$(tracer_of $APID)/comm 2>/dev/null)" hunch "attach: hunch traces the program"
keys att q
check_screen att '^Detach from threads-O2-pie' "attach: q asks"
keys att y
wait_screen att '^RC=[0-9][0-9]*$' 5 >/dev/null
tap_ok $(screen_all att | grep -q "^hunch: detached from threads-O2-pie (pid $APID), which runs on$"; echo $?) "attach: y detaches"
check_screen att '^RC=0' "attach: hunch exits 0"
untouched "$APID" "attach: after the detach the program"
tap_ok $(grep -Eq "^ threads-O2-pie +pid $APID +detached " "$TMP/att.txt"; echo $?) \
	"attach: --screenshot wrote the last screen (status 'detached')"
touch "$TMP/wf2"
wait "$APID"
tap_eq "$?" 0 "attach: the program finished with status 0"
tap_ok $(cmp -s "$TMP/t2.out" "$SRC/threads-wait.expected-out"; echo $?) "attach: and printed exactly its usual output"
restored att "attach"
TM kill-session -t att

# --- resize: 200x60 -> 80x24 -> 200x60 ---------------------------------
# (--no-rtlib: no search, whose live values would change the screen
# between a capture and its repaint; test-search.sh resizes a paused one)
new_term rs 200 60
type_in rs "$HUNCH run --no-rtlib -- $DEMO --seconds 60; echo RC=\$?"
check_screen rs '^ hunch-demo +pid [0-9]+ +running' "resize: starts at 200x60"
RSPID=$(pid_on_status rs)
tap_ok $(screen rs | grep -q ' 2 Where .* 1 Search '; echo $?) "resize: 200x60 shows the where axis and the search side by side"
fits rs 200 60 "resize at 200x60"
clean_screen rs "resize at 200x60"
TM resize-window -t rs -x 80 -y 24
settle rs
fits rs 80 24 "resize to 80x24"
# (waited for: under load the redraw after SIGWINCH can come late)
WAIT=10 check_screen rs '^ hunch-demo +pid [0-9]* *running' "resize: the status line is there at 80x24"
clean_screen rs "resize to 80x24"
TM resize-window -t rs -x 200 -y 60
settle rs
fits rs 200 60 "resize back to 200x60"
clean_screen rs "resize back to 200x60"
TM resize-window -t rs -x 100 -y 30
TM resize-window -t rs -x 80 -y 24
TM resize-window -t rs -x 132 -y 43
settle rs
fits rs 132 43 "three resizes in a row end at 132x43"
clean_screen rs "after three resizes"
keys rs q y
check_screen rs "detached from hunch-demo \\(pid $RSPID\\)" "resize: q y detaches"
kill "$RSPID"
wait_screen rs '^RC=[0-9][0-9]*$' 10 >/dev/null
TM kill-session -t rs

# --- NO_COLOR, LANG=C, and TERMs ------------------------------------------
# run_plain NAME ENV...: the threads program under the dashboard at 80x24
run_plain() {
	local s=$1; shift
	new_term "$s" 80 24
	rm -f "$TMP/wf-$s"
	type_in "$s" "env $* $HUNCH run -- $THREADS --threads 2 --wait-file $TMP/wf-$s; echo RC=\$?"
	wait_screen "$s" '^ threads-O2-pie +pid [0-9]+ +running' 10 >/dev/null
	wait_screen "$s" '^. ready$' 5 >/dev/null
	keys "$s" 2  # (it opens on the search)
	wait_screen "$s" '\[2 Where\]' 5 >/dev/null
}
end_plain() {
	keys "$1" q; wait_screen "$1" 'Detach from' 5 >/dev/null; keys "$1" y
	wait_screen "$1" 'its output' 5 >/dev/null
	touch "$TMP/wf-$1"
	restored "$1" "$2"
	TM kill-session -t "$1"
}
colours() { TM capture-pane -e -p -t "$1" | grep -Ec $'\e\\[[0-9;]*(3[0-7]|4[0-7]|38;5;[0-9]+|48;5;[0-9]+)[;m]'; }

run_plain col
tap_ok $([ "$(colours col)" -gt 0 ]; echo $?) "colour: with colours, the screen uses them"
end_plain col "colour"

run_plain mono NO_COLOR=1
tap_eq "$(colours mono)" 0 "NO_COLOR=1: no colour at all on the screen"
tap_ok $(log_has mono '^! ready$'; echo $?) "NO_COLOR=1: stderr is marked '!'"
tap_ok $(TM capture-pane -e -p -t mono | head -1 | grep -q $'\e\\[7m'; echo $?) "NO_COLOR=1: the status line is in reverse video"
fits mono 80 24 "NO_COLOR=1"
end_plain mono "NO_COLOR=1"

run_plain ascii LC_ALL=C LANG=C
tap_eq "$(screen ascii | LC_ALL=C grep -c $'[\x80-\xff]')" 0 "LANG=C: no byte >= 0x80 on the screen"
tap_ok $(screen ascii | grep -q '^ - Code$'; echo $?) "LANG=C: ASCII tree markers (- open, + closed)"
WAIT=15 check_screen ascii '\| [0-9]+Hz [0-9.]+%/5%( exp)? [0-9]+\+[0-9]+ [a-z]+$' "LANG=C: the search's fields on the status line"
keys ascii '?'
wait_screen ascii 'hunch dashboard: keys' 5 >/dev/null
tap_eq "$(screen ascii | LC_ALL=C grep -c $'[\x80-\xff]')" 0 "LANG=C: the help is ASCII too"
keys ascii x
end_plain ascii "LANG=C"

for term in vt100 linux screen xterm-256color tmux-256color; do
	s=t${term//[^a-z0-9]/}
	run_plain "$s" TERM=$term
	tap_ok $(status_line "$s" | grep -Eq '^ threads-O2-pie +pid [0-9]* *running'; echo $?) "TERM=$term: the status line"
	tap_ok $(screen "$s" | grep -q ' threads.c$'; echo $?) "TERM=$term: the where pane"
	fits "$s" 80 24 "TERM=$term"
	clean_screen_paused "$s" "TERM=$term"
	end_plain "$s" "TERM=$term"
done

# --- a TERM terminfo does not know: the plain session, said so -----------
new_term unk 100 24
type_in unk "TERM=nosuchterm $HUNCH run -- $THREADS --threads 2; echo RC=\$?"
wait_screen unk '^RC=[0-9][0-9]*$' 20 >/dev/null
tap_ok $(screen_all unk | grep -qx "hunch: cannot use terminal 'nosuchterm'; running without the dashboard"; echo $?) \
	"TERM=nosuchterm: hunch says it runs without the dashboard"
tap_ok $(screen_all unk | grep -qx 'counter: 20000'; echo $?) "TERM=nosuchterm: and the program runs as under the plain session"
tap_ok $(screen_all unk | grep -qx 'RC=0'; echo $?) "TERM=nosuchterm: with its exit status"
TM kill-session -t unk

# --- --batch on a terminal: batch mode (the search), no dashboard -----------
new_term bat 100 24
type_in bat "$HUNCH --batch --no-journal --time-limit 2 --kill-at-end; $HUNCH run --batch --no-journal -- $THREADS --threads 2; echo RC=\$?"
wait_screen bat '^RC=[0-9]' 30 >/dev/null
tap_ok $(screen_all bat | grep -q '^hunch report: hunch-demo --seconds 10 (pid [0-9]*)'; echo $?) "--batch: hunch hunts the demo and prints its report, no dashboard"
tap_ok $(screen_all bat | grep -q '^hunch: hunch-demo (pid [0-9]*) was killed by signal 9'; echo $?) "--batch: --kill-at-end ends the demo when the search stops"
tap_ok $(screen_all bat | grep -qx 'counter: 20000'; echo $?) "--batch: run prints the program's output directly"
tap_ok $(screen_all bat | grep -q '^hunch: .*threads-O2-pie (pid [0-9]*) exited with status 0$'; echo $?) "--batch: and how the program ended"
# threads ends within a second: the search may be cut short by its end,
# and an incomplete search exits 3 (README: exit status).
want=0
screen_all bat | sed -n '/^hunch report: .*threads-O2-pie/,$p' |
	grep -q '^ incomplete: ' && want=3
tap_eq "$(screen_all bat | grep -o '^RC=[0-9]*')" "RC=$want" "--batch: exit status $want, as the report's result says"
TM kill-session -t bat

# --- no terminal: the plain command line, exactly as before -----------
"$HUNCH" >"$TMP/plain.out" 2>"$TMP/plain.err" </dev/null
tap_eq "$?" 0 "no terminal: hunch runs the demo without the dashboard"
tap_eq "$(cat "$TMP/plain.out")" "$(cat "$SRC/demo.expected-out" | sed 's/0.2 seconds/3 seconds/')" \
	"no terminal: the demo's output is passed through untouched"
tap_ok $(grep -q 'where axis of hunch-demo' "$TMP/plain.err"; echo $?) "no terminal: the where axis is printed as before"

tap_done
