#!/bin/bash
# test-edges.sh - the dashboard where long text meets the terminal's
# edge, at 80x24 and at 200x50: the live demo's journal in the replay
# dashboard (the hint and `?` give the replay's keys, which move time in
# every pane; `p` in the Search pane pauses the search and the header
# and the status line say so with one word; the status line fits while
# playing, its state word last;
# a true `<` hypothesis, TooManySmallIOOps, draws a full bar; the Log
# pane wraps a long line that the strip cuts with an ellipsis; `e` in
# the Hypotheses pane says where the hypotheses are saved and that later
# runs load them; `g` is "top of the list" again), and a live program
# whose one output line is longer than both terminals: wrapped in the
# Log pane, its rows joined again equal to the line.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
SOCK=hunch-edges-$$
export LC_ALL=C.UTF-8  # ${#line} counts characters, not bytes
. "$HUNCH_SOURCE_ROOT/tests/tui/tmux-lib.sh"
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
gzip -dc "$HUNCH_SOURCE_ROOT/tests/replay/data/demo.jsonl.gz" >"$TMP/demo.jsonl"
mkdir -p "$TMP/home"
LONG=$(seq -s ' ' 1 120)   # 410 characters
# The journal's last bottleneck as the log's end lists it, a line longer
# than 80 columns: the last true node of the replay's --batch report
# (which nodes those are follows the search's rules, so it is read, not
# written here).
"$HUNCH" replay --batch "$TMP/demo.jsonl" > "$TMP/demo.report" 2>/dev/null
LAST=$(awk '/^ unconfirmed: / { exit }
	/^ [0-9]+\. [A-Za-z]+: .* since / { n = $1; h = $2; sub(/:$/, "", h);
		s = $0; sub(/.* since /, "", s); sub(/ s.*/, "", s); next }
	n != "" && /^    where: / { w = $0; sub(/^    where: /, "", w);
		gsub(/, /, ",", w); l = "# " n " " h "<" w "> since " s " s"; n = "" }
	END { print l }' "$TMP/demo.report")
LAST_N=${LAST#\# }; LAST_N=${LAST_N%%.*}
tap_ok $([ "${#LAST}" -gt 80 ]; echo $?) "the journal's last bottleneck is longer than 80 columns (${#LAST}): $LAST"

status() { screen "$1" | head -1; }
# fresh NAME: a cleared shell, so that the next RC= is the next command's
fresh() {
	local i
	type_in "$1" clear
	for ((i = 0; i < 100; i++)); do
		screen "$1" | grep -q '^RC=[0-9][0-9]*$' || return 0
		sleep 0.05
	done
}
wait_no_screen() {  # wait_no_screen NAME ERE [SECONDS]: until no line matches
	local i n=$(( ${3:-10} * 20 ))
	for ((i = 0; i < n; i++)); do
		screen "$1" | grep -Eq -- "$2" || return 0
		sleep 0.05
	done
	return 1
}
widest() {  # the widest row, in characters
	local line m=0
	while IFS= read -r line; do
		[ "${#line}" -gt "$m" ] && m=${#line}
	done < <(screen "$1")
	echo "$m"
}
# rows_after NAME ERE N: the N rows that follow the first row matching ERE
rows_after() { screen "$1" | grep -EA"$3" -- "$2" | tail -n +2; }
# page_to NAME ERE: PgDn until a row matches (at most 20 pages)
page_to() {
	local i
	for ((i = 0; i < 20; i++)); do
		screen "$1" | grep -Eq -- "$2" && return 0
		keys "$1" NPage
		wait_screen "$1" "$2" 1 >/dev/null 2>&1 && return 0
	done
	return 1
}

for size in 80x24 200x50; do
	W=${size%x*} H=${size#*x} s=r$W
	new_term $s "$W" "$H"
	type_in $s "cd $TMP && env -u XDG_CONFIG_HOME HOME=$TMP/home EDITOR=true $HUNCH replay demo.jsonl; echo RC=\$?"
	check_screen $s '^ hunch-demo +pid [0-9]+ +paused 1x +0:00\.3/0:10\.1 ' "$size: the replay opens paused at 0:00.3"
	check_screen $s '^paused at 0\.3 s: s play/pause  > next conclusion  t time  \+/- speed  \$ end$' \
		"$size: the hint gives the replay's keys"

	# ? lists the replay's keys first
	keys $s '?'
	check_screen $s '  hunch dashboard: keys and what the screen says( |$)' "$size: ? opens the help"
	check_screen $s '  Replay \(hunch replay\): these keys work in every pane( |$)' "$size: ?: the replay's keys first"
	check_screen $s '  s play/pause \(at the end: again\)  > next conclusion  \$ end( |$)' "$size: ?: s, > and \$"
	check_screen $s '  t go to time \(seconds or m:ss\)  \+/- speed \(0\.5x to 100x\)( |$)' "$size: ?: t and +/-"
	check_screen $s '  p c e do the same where the pane has no such key of its own( |$)' "$size: ?: the old keys and where they work"
	check_screen $s '^replay: s play/pause  > next conclusion  t go to time  \+/- speed  \$ end$' "$size: ?: the hint line too"
	if [ "$W" = 80 ]; then
		check_screen $s '[─] 1-20 of 43: ↑↓ j/k PgDn scroll, any other key closes [─]' "$size: ?: cut, it scrolls and says so"
		keys $s G
		check_screen $s '  5Hz      samples a second \(rate\)( |$)' "$size: ?: G: the status line's 5Hz explained"
		check_screen $s '  exp 5\+0  experiments active \+ pending \(act, pend\)( |$)' "$size: ?: exp A+P explained"
		check_screen $s '  state    searching; slowed: the cost limit holds new( |$)' "$size: ?: slowed explained"
		check_screen $s "           at a replay's end, the journal's: time limit, \\.\\.\\.( |\$)" "$size: ?: the replay's end word explained"
		check_screen $s '  bar      half at the threshold \|, fuller as it holds \(for( |$)' "$size: ?: the Search pane's bars"
	else
		check_screen $s '[─] any key closes [─]' "$size: ?: all of it fits"
		check_screen $s '  5Hz      samples a second \(rate\)( |$)' "$size: ?: the status line's 5Hz explained"
		check_screen $s '  \* \+ :    active; pending \(cost\); queued( |$)' "$size: ?: the Search pane's marks"
	fi
	keys $s x
	tap_ok $(wait_no_screen $s 'hunch dashboard: keys' 5; echo $?) "$size: x closes the help"

	# the Hypotheses pane: e is its own (a journal's hypotheses are not
	# edited), $ and s the replay's
	keys $s 5 e
	check_screen $s '(^|│) cannot edit the hypotheses: ' "$size: e in pane 5 is the pane's"
	tap_ok $(status $s | grep -Eq ' paused 1x +0:00\.3/0:10\.1 '; echo $?) "$size: e did not move the replay"

	# the status line while playing at 0.5x: within the width, state last
	keys $s -
	check_screen $s '^speed 0\.5x$' "$size: - slows to 0.5x"
	keys $s s
	check_screen $s '^ hunch-demo +pid [0-9]+ +playing 0\.5x +0:0[0-9]\.[0-9]/0:10\.1 .*\| .* (searching|slowed|idle)$' \
		"$size: s plays; the status line ends with the search's state"
	tap_ok $([ "$(status $s | awk '{ print length($0) }')" -le "$W" ]; echo $?) "$size: the status line fits $W columns"
	keys $s s
	check_screen $s '^ hunch-demo +pid [0-9]+ +paused 0\.5x ' "$size: s pauses"
	keys $s +

	# p in the Search pane is its own: the search pauses; the header and
	# the status line say so at once, though the replay is paused
	keys $s 1 p
	check_screen $s 'Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, paused( |$)' "$size: p in the Search pane pauses the search"
	check_screen $s '^ hunch-demo +pid [0-9]+ +paused 1x .*\| .* paused$' "$size: the status line says paused too"
	keys $s p
	check_screen $s 'Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, (searching|slowed|idle)( |$)' "$size: p again resumes it"
	tap_eq "$(status $s | awk '{ print $NF }')" \
		"$(screen $s | grep -Eo 'Global search: [0-9]+ nodes, [0-9]+ true, [0-9]+ active, [a-z]+' | awk '{ print $NF }')" \
		"$size: header and status line, one word"

	keys $s 5 '$'
	check_screen $s '^ hunch-demo +pid [0-9]+ +end 1x +0:10\.1/0:10\.1 ' "$size: \$ in pane 5: the end"

	# the Search pane: a true '<' hypothesis's bar is full; g goes to top
	keys $s 1 f
	tap_ok $(page_to $s '(^|│) +>T  TooManySmallIOOps  whole program +████████ +1/4096 '; echo $?) \
		"$size: TooManySmallIOOps (<) true: a full bar, 1 byte an operation against 4096"
	keys $s g
	check_screen $s '(^|│)topLevelHypothesis</Code,/Process,/SyncObject,/Files>( |$)' "$size: g in the Search pane: top of the list"
	check_screen $s ' end 1x +0:10\.1/0:10\.1 ' "$size: g did not move the replay"

	# the log: cut with an ellipsis in the strip, wrapped in pane 6
	if [ "$W" = 80 ]; then
		wait_screen $s "^# $LAST_N\\. " 5 >/dev/null
		cut=$(screen $s | grep -E "^# $LAST_N\\. " | tail -1)
		tap_ok $([ "${#cut}" -eq 80 ] && [ "${cut%…}" != "$cut" ] &&
			 [ "${LAST#"${cut%…}"}" != "$LAST" ]; echo $?) \
			"$size: the strip cuts the long log line with an ellipsis at 80 columns: $cut"
		keys $s 6 6
		sleep 0.3
		first=$(screen $s | grep -E "^# $LAST_N\\. " | tail -1)
		tap_ok $([ -n "$first" ] && [ "${#first}" -le 80 ] &&
			 [ "${first%…}" = "$first" ] &&
			 [ "${LAST#"$first"}" != "$LAST" ]; echo $?) \
			"$size: pane 6 wraps it (its first row a start of the line, no ellipsis): $first"
		# (the first row, then the continuation rows, indented by 2)
		joined=$(screen $s | awk -v re="^# $LAST_N\\. " '
			on && /^  / { printf "%s", substr($0, 3); next }
			{ on = 0 } $0 ~ re { printf "%s", $0; on = 1 }')
		tap_ok $([ "$joined" = "$LAST" ] || [ "$joined" = "${LAST/> since/>since}" ]
			 echo $?) "$size: its rows joined are the whole line"
	else
		keys $s 6
		check_screen $s "^$(printf '%s' "$LAST" | sed 's/[][\.*^$/]/\\&/g')\$" "$size: the log line is whole at $W columns"
	fi
	tap_ok $([ "$(widest $s)" -le "$W" ]; echo $?) "$size: no line wider than $W columns"
	keys $s q
	check_screen $s '^RC=0$' "$size: q quits"

	# live: e in the Hypotheses pane, once the program ended
	fresh $s
	type_in $s "env -u XDG_CONFIG_HOME HOME=$TMP/home EDITOR=true $HUNCH run -- $TARGETS_DIR/bn_sleepy-O2-pie --seconds 1; echo RC=\$?"
	WAIT=30 check_screen $s '^ bn_sleep[^ ]* +pid [0-9]+ +exited 0 ' "$size live: bn_sleepy ran and ended"
	keys $s 5 e
	check_screen $s "(^|│) $TMP/home/\\.config/hunch/hypotheses\\.json is unchanged\$" "$size live: e in pane 5 ran the editor"
	if [ "$W" = 80 ]; then
		tap_eq "$(rows_after $s 'hypotheses\.json is unchanged$' 2)" \
" Saved in ~/.config/hunch/hypotheses.json: every later hunch run loads it too
 (remove it to go back to the defaults)." "$size live: e says where it saved and that later runs load it (wrapped)"
	else
		check_screen $s '│ Saved in ~/\.config/hunch/hypotheses\.json: every later hunch run loads it too \(remove it to go back to the defaults\)\.$' \
			"$size live: e says where it saved and that later runs load it"
	fi
	tap_ok $([ -f "$TMP/home/.config/hunch/hypotheses.json" ]; echo $?) "$size live: the file is there"
	rm -f "$TMP/home/.config/hunch/hypotheses.json"
	keys $s q
	check_screen $s '^RC=0$' "$size live: q quits"

	# live: a program's output line longer than the terminal
	fresh $s
	type_in $s "$HUNCH run --no-rtlib -- sh -c 'seq -s \" \" 1 120; exec sleep 2'; echo RC=\$?"
	WAIT=20 check_screen $s '^ sh +pid [0-9]+ +exited 0 ' "$size live: the program ran and ended"
	keys $s 6 6
	check_screen $s '^  1 2 3 4 5 6 7 8 9 10 ' "$size live: pane 6 has the line"
	n=$(( (${#LONG} + W - 3) / (W - 2) ))
	tap_eq "$(screen $s | grep -EA$((n + 2)) '^  1 2 3 4 5 ' | grep -E '^  [0-9]' | sed 's/^  //' | paste -sd ' ')" \
		"$LONG" "$size live: wrapped, its rows joined are the line"
	tap_ok $([ "$(widest $s)" -le "$W" ]; echo $?) "$size live: no line wider than $W columns"
	keys $s q
	check_screen $s '^RC=0$' "$size live: q quits"
	TM kill-session -t $s
done
tap_done
