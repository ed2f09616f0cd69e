#!/bin/bash
# test-findings.sh - the dashboard's findings, in tmux, on real runs:
# the dashboard opens on the Search pane with the findings strip under
# it ("none yet" until the first finding); findings appear ranked while
# the program runs; when it ends the strip's summary says how and when,
# with the search's result; each row is exactly the rank, the impact and
# the finding's words of the report (cut with an ellipsis at the screen's
# edge); after q the terminal gets the batch report's head, exactly what
# `hunch replay --batch` of the same journal prints up to the end of its
# findings.  The demo at 80x24 (three rows) and bn_mutex at 160x44 (the
# wide layout: up to eight rows, its mutex among them); a resize and a
# Ctrl-L repaint draw the same strip.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
DEMO=$TARGETS_DIR/hunch-demo
MUTEX=$TARGETS_DIR/bn_mutex-O2-pie
TMP=$(mktemp -d)
SOCK=hunch-findings-$$
export LC_ALL=C.UTF-8  # ${#line} counts characters, not bytes
unset NO_COLOR
. "$HUNCH_SOURCE_ROOT/tests/tui/tmux-lib.sh"
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT

rule() { local i s=; for ((i = 0; i < $1; i++)); do s+=─; done; printf '%s' "$s"; }
# strip NAME: the strip's rows under its title, down to the log's title
strip() { screen "$1" | sed -n '/^ Findings /,/^ 6 Log /p' | sed '1d;$d'; }
strip_title() { screen "$1" | grep '^ Findings '; }
settle() {  # settle NAME: until two captures 0.3 s apart are equal
	local a b i
	for ((i = 0; i < 30; i++)); do
		a=$(screen "$1"); sleep 0.3; b=$(screen "$1")
		[ "$a" = "$b" ] && return 0
	done
}

# head FILE: the report's text up to the end of its findings (what the
# dashboard prints after q).
# summary_row REPORT WHEN W FORMAT: the strip's summary row at width W,
# " exited 0 at WHEN: " and the result (FORMAT, %s the lead finding's
# words; "%r" the report's result), cut with "…" at the W - 1 columns
# after the margin.
summary_row() {
	python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w = int(sys.argv[3])
res = r["result"] if sys.argv[4] == "%r" else sys.argv[4] % r["findings"][0]["text"]
s = "exited 0 at %s: %s" % (sys.argv[2], res)
print(" " + (s if len(s) <= w - 1 else s[:w - 2] + "\u2026"))
PY
}
head_of() { awk 'f && /^$/ {exit} /^findings/ {f=1} {print}' "$1"; }
# want_rows FILE W N: the strip's rows the report's findings make at
# width W, the first N: " R  IMPACT     WORDS", cut at W with "…".
want_rows() {
	python3 - "$@" <<'PY'
import re, sys
path, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows, inf = [], False
for line in open(path, encoding="utf-8").read().split("\n"):
    if line.startswith("findings"):
        inf = True
        continue
    if not inf:
        continue
    if line == "":
        break
    m = re.match(r"^ +([0-9]+)\. (.*)$", line)
    if m:
        rows.append([int(m.group(1)), "\u2014", m.group(2)])
        continue
    m = re.search(r"[0-9.]+ (s/s|CPUs)", line)
    if m and rows and rows[-1][1] == "\u2014":
        rows[-1][1] = m.group(0)
for r, imp, words in rows[:n]:
    row = "%2d  %-11s%s" % (r, imp, words)
    print(row if len(row) <= w else row[:w - 1] + "\u2026")
PY
}
fits() {  # fits NAME W H TEST-NAME
	local s=$1 w=$2 h=$3 n=0 bad=0 line
	while IFS= read -r line; do
		n=$((n + 1))
		[ "${#line}" -le "$w" ] || bad=$((bad + 1))
	done < <(screen "$s")
	tap_ok $([ "$n" -eq "$h" ] && [ "$bad" -eq 0 ]; echo $?) \
		"$4: $h lines, none wider than $w (got $n lines, $bad too wide)"
}

# --- the demo at 80x24 ------------------------------------------------------
new_term demo 80 24
type_in demo "cd $TMP && $HUNCH run --journal $TMP/demo.jsonl -- $DEMO; echo RC=\$?"
check_screen demo '^\[1 Search\]  2 Where   3 Histograms   4 Tunables   5 Hypotheses   6 Log$' \
	"demo: the dashboard opens on the Search pane"
check_screen demo "^ Findings $(rule 70)\$" "demo: the findings strip, its title alone while there is none"
tap_ok $(wait_screen demo '^  none yet$' 10; echo $?) "demo: it says 'none yet' before the first finding"
WAIT=20 check_screen demo '^ 1  [0-9.]+ (s/s|CPUs) +[^ ]' "demo: the first finding appears while the demo runs: rank, impact, words"
check_screen demo '^ Findings ─+ [0-9]+ findings?, by impact$' "demo: the title counts the findings, ranked by impact"
rows=$(strip demo | grep -c '^ *[0-9]\+  ')
tap_ok $([ "$rows" -ge 1 ] && [ "$rows" -le 3 ]; echo $?) "demo: at 80x24 the strip shows at most three of them ($rows)"
fits demo 80 24 "demo with findings"
WAIT=30 check_screen demo '^ hunch-demo +pid [0-9]+ +exited 0 ' "demo: the demo ends"
check_screen demo '^ Findings at the end ─+ [0-9]+ findings?, by impact$' "demo: the strip's title says the program has ended"
check_screen demo '^ exited 0 at [0-9]+:[0-9]{2}: bottleneck: ' \
	"demo: its summary: how the demo ended, when, and the search's result"
check_screen demo '^the program has ended: q quits and prints the findings$' "demo: the hint says q prints them"
settle demo
live_strip=$(strip demo)
live_title=$(strip_title demo)
n=$(strip_title demo | sed -n 's/.* \([0-9]*\) findings\{0,1\}, by impact$/\1/p')
shown=$((n < 3 ? n : 3))
tap_eq "$(wc -l <<< "$live_strip")" $((1 + shown)) "demo: then the first $shown of the $n findings"
# A resize and back, then Ctrl-L: the strip is drawn the same.
TM resize-window -t demo -x 100 -y 30
settle demo
TM resize-window -t demo -x 80 -y 24
settle demo
keys demo C-l
settle demo
tap_eq "$(strip demo)" "$live_strip" "demo: after a resize and a repaint the strip is the same"
keys demo q
wait_screen demo '^RC=[0-9][0-9]*$' 15 >/dev/null
tap_ok $(screen_all demo | grep -qx 'RC=0'; echo $?) "demo: q quits; hunch exits with the demo's status, 0"
printed=$(screen_all demo | sed -n '/^hunch report: /,/^hunch: journal /p' | sed '$d')
"$HUNCH" replay --batch "$TMP/demo.jsonl" >"$TMP/demo-replay.txt" 2>/dev/null
head_of "$TMP/demo-replay.txt" >"$TMP/demo-head.txt"
tap_eq "$printed" "$(cat "$TMP/demo-head.txt")" \
	"demo: q prints the batch report's head (replay --batch of the journal, up to the end of its findings)"
tap_eq "$(grep -c '^ *[0-9]\+\. ' <<< "$printed")" "$n" "demo: the head lists the $n findings the strip counted"
# The summary's result is the lead finding in the report's words (the
# journal's report), cut with an ellipsis at the 79 columns after the
# strip's margin.
"$HUNCH" replay --batch --report "$TMP/demo-report.json" "$TMP/demo.jsonl" >/dev/null 2>&1
when=$(sed -n 's/^ exited 0 at \([0-9:]*\): .*/\1/p' <<< "$live_strip")
want=$(summary_row "$TMP/demo-report.json" "$when" 80 'bottleneck: %s' )
tap_eq "$(sed -n 1p <<< "$live_strip")" "$want" \
	"demo: the summary is the strip's first row: how it ended, when, and the lead finding"
tap_eq "$(sed 1d <<< "$live_strip")" "$(want_rows "$TMP/demo-head.txt" 80 "$shown")" \
	"demo: each row of the strip is the report's rank, impact and words, cut at 80 columns"
TM kill-session -t demo

# --- bn_mutex at 160x44: the wide layout ------------------------------------
new_term wide 160 44
type_in wide "cd $TMP && $HUNCH run --journal $TMP/mutex.jsonl -- $MUTEX --seconds 10 --threads 4; echo RC=\$?"
check_screen wide '^ 2 Where .*│ 1 Search' "wide: the where axis and the Search pane side by side"
check_screen wide '^ Findings ─+( [0-9]+ findings?, by impact)?$' "wide: the strip over the log"
tap_eq "$(strip_title wide | wc -m)" 161 "wide: its title spans the 160 columns"
WAIT=30 check_screen wide '^ +[0-9]+  [0-9.]+ (s/s|CPUs) +[0-9]+ threads spend [0-9]+% of their time waiting for mutex `bnmx_lock`' \
	"wide: the contended mutex is a finding, in plain words with its threads and share of time"
WAIT=30 check_screen wide '^ bn_mutex-O2-pie +pid [0-9]+ +exited 0 ' "wide: bn_mutex ends"
check_screen wide '^ exited 0 at [0-9]+:[0-9]{2}: [a-z]' "wide: the summary: how it ended and when, then the result"
settle wide
live_strip=$(strip wide)
n=$(strip_title wide | sed -n 's/.* \([0-9]*\) findings\{0,1\}, by impact$/\1/p')
shown=$((n < 8 ? n : 8))
tap_eq "$(wc -l <<< "$live_strip")" $((1 + shown)) "wide: the summary and the first $shown of the $n findings"
fits wide 160 44 "wide at the end"
keys wide q
wait_screen wide '^RC=[0-9][0-9]*$' 15 >/dev/null
printed=$(screen_all wide | sed -n '/^hunch report: /,/^hunch: journal /p' | sed '$d')
"$HUNCH" replay --batch "$TMP/mutex.jsonl" >"$TMP/mutex-replay.txt" 2>/dev/null
head_of "$TMP/mutex-replay.txt" >"$TMP/mutex-head.txt"
# Whether every top-level hypothesis concludes in bn_mutex's 10 s
# depends on the machine's load (CPUstarved reads near its threshold
# here), so the summary's result is checked against the journal's own
# report, whatever it is: "bottleneck: " and the lead finding, or "incomplete: ...".
"$HUNCH" replay --batch --report "$TMP/mutex-report.json" "$TMP/mutex.jsonl" >/dev/null 2>&1
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"])' "$TMP/mutex-report.json")
when=$(sed -n 's/^ exited 0 at \([0-9:]*\): .*/\1/p' <<< "$live_strip")
tap_eq "$(sed -n 1p <<< "$live_strip")" "$(summary_row "$TMP/mutex-report.json" "$when" 160 '%r')" \
	"wide: the summary's result is the report's, cut at 160 columns ($want)"
tap_eq "$printed" "$(cat "$TMP/mutex-head.txt")" "wide: q prints the batch report's head"
tap_eq "$(sed 1d <<< "$live_strip")" "$(want_rows "$TMP/mutex-head.txt" 160 "$shown")" \
	"wide: each row is the report's rank, impact and words, cut at 160 columns"
TM kill-session -t wide

tap_done
