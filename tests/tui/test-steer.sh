#!/bin/bash
# test-steer.sh - a steered dashboard session journaled and replayed,
# in tmux: on bn_mutex (a contended mutex) the user edits a
# tunable, enables a metric and starts an experiment by hand, and
# reloads the hypotheses after $EDITOR (a script) added one; the program
# is killed, `E` exports the search graph, and the session quits writing its
# report (--report).  The journal holds each action with its fields;
# `hunch replay --batch --report` of it writes the live report (apart
# from the fields naming the replay) and the replay's search graph is
# the live one.  Then `E` in the replay dashboard at the journal's end:
# each kind equals `hunch replay --export-*` of the same journal, and an
# unwritable path is a note naming it and the reason.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
SOCK=hunch-steer-$$
export LC_ALL=C.UTF-8
unset NO_COLOR VISUAL
BIN=$TARGETS_DIR/bn_mutex-O2-nopie

. "$HUNCH_SOURCE_ROOT/tests/tui/tmux-lib.sh"
trap 'TM kill-server 2>/dev/null; [ -n "$HUNCH_KEEP_TMP" ] && echo "# kept $TMP" || rm -rf "$TMP"' EXIT
text() { TM send-keys -t "$1" -l "$2"; }
hint_line() { screen "$1" | tail -n 1; }
# action NAME: the journal's action records of that kind, ts dropped
action() { jq -c --arg a "$1" 'select(.t == "action" and .action == $a) | del(.ts)' "$TMP/live.jsonl"; }
# the report without what names the replay
report() { jq -S 'del(.target.mode, .replay)' "$1"; }

cat >"$TMP/editor.sh" <<'EOF'
#!/bin/sh
# adds HotLoop under the root
sed -i 's/^  "hypotheses": {$/  "hypotheses": {\n    "HotLoop": { "parent": "topLevelHypothesis", "description": "A loop that computes.", "metric": "cpu_inclusive", "threshold": "PC_CPUThreshold", "compare": "gt" },/' "$1"
EOF
chmod +x "$TMP/editor.sh"

# --- the live session --------------------------------------------------------
new_term live 80 24
type_in live "cd $TMP && env XDG_CONFIG_HOME=$TMP/cfg XDG_STATE_HOME=$TMP/state EDITOR=$TMP/editor.sh $HUNCH run --journal $TMP/live.jsonl --report $TMP/live.json --set PC_SyncThreshold=0.25 -- $BIN --seconds 120 --threads 4; echo RC=\$?"
check_screen live '^ bn_mutex-O2-nopie +pid [0-9]+ +running' "live: the dashboard runs bn_mutex"
WAIT=20 check_screen live '(searching|idle|slowed)$' "live: the search runs"

# a tunable: PC_CPUThreshold 0.3 -> 0.9
keys live 4
n=$(XDG_CONFIG_HOME=$TMP/none $HUNCH check --list | grep -E '^[A-Za-z_][A-Za-z0-9_]* +[-0-9.]' | grep -v '\[developer\]' | grep -n '^PC_CPUThreshold ' | cut -d: -f1)
for ((i = 1; i < n; i++)); do keys live j; done
keys live Enter; text live 0.9; keys live Enter
check_screen live '^ PC_CPUThreshold = 0\.9 \(was 0\.3\)$' "live: the tunable is applied"

# a metric and an experiment by hand on bnmx_outside_work
WORK=/Code/bn_mutex-O2-nopie/bn_mutex.c/bnmx_outside_work
keys live 2; keys live /; text live bnmx_outside_work; keys live Enter
check_screen live "^$WORK  \\[function at" "live: / finds bnmx_outside_work"
keys live f
keys live m; keys live Enter
check_screen live '\[3 Histograms\]' "live: m enables cpu_inclusive there (its histogram)"
keys live 2; keys live x; keys live Enter
# (the note is cut at 80 columns)
check_screen live "^CPUbound on $WORK (started by|is already in)" "live: x starts CPUbound there"
by_hand=$(screen live | grep -c "^CPUbound on $WORK started by")

# the hypotheses: $EDITOR adds HotLoop, applied
keys live 5; keys live e
check_screen live "^ applied $TMP/cfg/hunch/hypotheses.json: 1 new hypothesis$" "live: the edited hypotheses are applied"

# the search goes on under the new hypotheses: HotLoop concludes
keys live 1; keys live G
WAIT=30 check_screen live '^   >[TF][*+: ] HotLoop  whole program ' "live: HotLoop, added by the reload, concludes in the Search pane"

# the program is ended (SIGTERM: whatever the load, after the steering
# and at a point the journal records); E exports the graph; q quits
pid=$(screen live | head -1 | sed -n 's/.* pid \([0-9]*\) .*/\1/p')
kill -TERM "$pid"
WAIT=20 check_screen live '^ bn_mutex[^ ]* +pid [0-9]+ +killed SIGTERM' "live: the program ends (killed)"
WAIT=20 check_screen live ' ended$' "live: and so does the search"
keys live E
check_screen live '^export: c hist CSV  d graph dot  j graph JSON  w where JSON  Esc cancels$' "live: E offers the kinds"
keys live j
check_screen live '^search graph \(JSON\) to: bn_mutex-O2-nopie-[0-9]{8}T[0-9]{6}Z\.shg\.json$' "live: j offers a name after the program and the time"
keys live C-u; text live "$TMP/live-shg.json"; keys live Enter
check_screen live "^exported the search graph \\(JSON\\) to $TMP/live-shg\\.json$" "live: the graph is exported (status line)"
keys live E; keys live c; keys live C-u; text live live-csv; keys live Enter
check_screen live '^exported [0-9]+ histograms \(CSV\) to live-csv/$' "live: the histograms are exported (CSV)"
keys live q
WAIT=20 check_screen live '^RC=[0-9][0-9]*$' "live: q ends the session"

# --- the journal --------------------------------------------------------------
tap_eq "$(head -1 "$TMP/live.jsonl" | jq -c '[.mode, .tunables.PC_SyncThreshold, .tunables.PC_CPUThreshold, (.target.pid > 0)]')" '["dashboard",0.25,0.3,true]' \
	"journal: the header has the tunables in effect (--set included) and the pid"
tap_ok $(cmp -s <(head -1 "$TMP/live.jsonl" | jq -S .hypotheses) <(jq -S . "$HUNCH_SOURCE_ROOT/hypotheses/default.json"); echo $?) \
	"journal: and the hypotheses document (the defaults, the one file loaded)"
tap_eq "$(action tunable)" '{"t":"action","action":"tunable","name":"PC_CPUThreshold","old":0.3,"value":0.9}' "journal: the tunable record (name, old, new)"
tap_eq "$(action metric_enable | jq -c '[.name, .focus, .paths, (.inst | type)]')" \
	"[\"cpu_inclusive\",\"<$WORK,/Process,/SyncObject,/Files>\",[\"$WORK\",\"/Process\",\"/SyncObject\",\"/Files\"],\"number\"]" \
	"journal: the metric record (metric, focus, paths, instance)"
tap_eq "$(action experiment | jq -c '[.hyp, .focus, .paths, .phase, (.node | type)]' | sort -u | wc -l)" "$by_hand" \
	"journal: an experiment record when x made a node ($by_hand)"
if [ "$by_hand" = 1 ]; then
	tap_eq "$(action experiment | jq -c '[.hyp, .focus, .paths, .phase]')" \
		"[\"CPUbound\",\"<$WORK,/Process,/SyncObject,/Files>\",[\"$WORK\",\"/Process\",\"/SyncObject\",\"/Files\"],0]" \
		"journal: the experiment record (hypothesis, focus, paths, phase)"
else
	tap_ok 0 "journal: CPUbound was already in the search: no experiment record"
fi
tap_eq "$(action hypotheses | jq -c '[.added, (.files[0].file | endswith("/default.json")), .files[1].file, (.files[1].document.hypotheses.HotLoop.metric)]')" \
	"[1,true,\"$TMP/cfg/hunch/hypotheses.json\",\"cpu_inclusive\"]" \
	"journal: the reload record (the files and their documents)"
tap_eq "$(jq -c '.files[1].document' <(action hypotheses))" "$(jq -c . "$TMP/cfg/hunch/hypotheses.json")" \
	"journal: the user's whole edited document"

# --- the replay ---------------------------------------------------------------
$HUNCH replay --batch --report "$TMP/replay.json" --export-shg-json "$TMP/replay-shg.json" \
	"$TMP/live.jsonl" >"$TMP/replay.txt" 2>"$TMP/replay.err"
# exit 3 exactly when the live session's report was incomplete (the
# session is quit while a top-level hypothesis may still be testing)
rc=$?
want=0
jq -e '.result | startswith("incomplete")' "$TMP/live.json" >/dev/null && want=3
tap_eq "$rc" "$want" "replay --batch: exit $want, as the live report's result says"
tap_eq "$(cat "$TMP/replay.err")" "" "replay --batch: nothing it could not replay"
tap_ok $(cmp -s <(report "$TMP/live.json") <(report "$TMP/replay.json"); echo $?) \
	"replay --batch: the live report, but for the fields naming the replay"
diff <(report "$TMP/live.json") <(report "$TMP/replay.json") | head -20 | sed 's/^/# /'
tap_eq "$(jq -r '.. | objects | select(.hypothesis? == "HotLoop") | .trace' "$TMP/replay.json")" \
	"$(jq -r '.. | objects | select(.hypothesis? == "HotLoop") | .trace' "$TMP/live.json")" \
	"replay --batch: the reloaded HotLoop ran as it did live"
tap_ok $(cmp -s "$TMP/live-shg.json" "$TMP/replay-shg.json"; echo $?) \
	"replay: the same search graph as the live dashboard's at the end"
$HUNCH replay --export-csv "$TMP/replay-csv" "$TMP/live.jsonl" >/dev/null 2>&1
tap_ok $(diff -r "$TMP/live-csv" "$TMP/replay-csv" >/dev/null; echo $?) \
	"replay: the same histograms ($(ls "$TMP/live-csv" | wc -l) files)"
# (its focus exactly: the search may also measure a thread's share of
# bnmx_outside_work when the program ends, a second file)
tap_eq "$(ls "$TMP/replay-csv" | grep -c '_cpu_inclusive_.*_bnmx_outside_work__Process__SyncObject__Files_\.csv$')" 1 \
	"replay: the curve enabled by hand is among them"

# --- E in the replay dashboard ------------------------------------------------
new_term rp 80 24
type_in rp "cd $TMP && $HUNCH replay $TMP/live.jsonl; echo RC=\$?"
check_screen rp '^ bn_mutex[^ ]* +pid [0-9]+ +paused' "replay: the dashboard opens"
export_as() {  # export_as KEY FILE WHAT
	keys rp E; keys rp "$1"
	wait_screen rp ' to: [^ ]+$' 5 >/dev/null
	keys rp C-u; text rp "$2"; keys rp Enter
	check_screen rp "^exported .* to $2/?\$" "replay: E $1 writes $3"
}
# at the replay time: the first tick's graph, before the steering
export_as j "$TMP/rp-start.json" "the graph at the first tick"
tap_eq "$(jq -c '[.now_s < 1, ([.searches[0].nodes[].hypothesis] | index("HotLoop"))]' "$TMP/rp-start.json")" '[true,null]' \
	"replay: the export holds the state at the replay time (no HotLoop yet)"
keys rp e
check_screen rp '^ bn_mutex[^ ]* +pid [0-9]+ +end ' "replay: e goes to the end"
$HUNCH replay --export-dot "$TMP/cli.dot" --export-shg-json "$TMP/cli-shg.json" \
	--export-where-json "$TMP/cli-where.json" --export-csv "$TMP/cli-csv" \
	"$TMP/live.jsonl" >/dev/null 2>&1
export_as d "$TMP/rp.dot" "the graph as dot"
tap_ok $(cmp -s "$TMP/cli.dot" "$TMP/rp.dot"; echo $?) "replay: the dot equals --export-dot's"
export_as j "$TMP/rp-shg.json" "the graph as JSON"
tap_ok $(cmp -s "$TMP/cli-shg.json" "$TMP/rp-shg.json"; echo $?) "replay: the JSON equals --export-shg-json's"
export_as w "$TMP/rp-where.json" "the where axis"
tap_ok $(cmp -s "$TMP/cli-where.json" "$TMP/rp-where.json"; echo $?) "replay: the where axis equals --export-where-json's"
export_as c "$TMP/rp-csv" "the histograms"
tap_ok $(diff -r "$TMP/cli-csv" "$TMP/rp-csv" >/dev/null && [ -n "$(ls "$TMP/rp-csv")" ]; echo $?) \
	"replay: the CSV files equal --export-csv's ($(ls "$TMP/rp-csv" | wc -l) files)"
keys rp E; keys rp d; keys rp C-u; text rp no/such/x.dot; keys rp Enter
check_screen rp "^export failed: cannot write no/such/x\\.dot: No such file or directory$" \
	"replay: an unwritable path: the note names it and the reason"
keys rp E; keys rp Escape
check_screen rp '^export cancelled$' "replay: Esc cancels"
check_screen rp '^ bn_mutex[^ ]* +pid [0-9]+ +end ' "replay: the session goes on"
keys rp '?'
check_screen rp 'E export' "help: ? lists E"
check_screen rp '[─-] 1-20 of 43: ↑↓ j/k PgDn scroll, any other key closes [─-]' "help: at 80x24 it scrolls, and says so"
keys rp G
check_screen rp '  Findings: rank, impact in seconds per second \(- when none\)( |$)' "help: G shows its last line"
check_screen rp '[─-] 24-43 of 43: ↑↓ j/k PgDn scroll, any other key closes [─-]' "help: the footer follows"
keys rp Escape; keys rp q
check_screen rp '^RC=0$' "replay: q quits"

tap_done
