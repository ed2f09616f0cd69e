#!/bin/bash
# test-header-config.sh - a journal's header holds the configuration the
# search ran with, so a replay elsewhere (other files, none) searches
# with the same hypotheses and tunables (docs/journal-format.md):
# batch mode with the defaults writes the defaults' document; with a
# second file (--hypotheses) every file's document in load order
# (hypotheses_files); --set and a file's "set" values in `tunables`.
# The replay, with the user's files gone, prints the live report.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
prog=$TARGETS_DIR/bn_sleepy-O2-pie
defaults=$HUNCH_SOURCE_ROOT/hypotheses/default.json

hunt() {  # hunt NAME [OPTIONS...]: batch search of bn_sleepy for $SECS s
	local name=$1
	shift
	"$HUNCH" run --batch --journal "$TMP/$name.jsonl" "$@" -- "$prog" \
		--seconds "${SECS:-2}" >"$TMP/$name.txt" 2>"$TMP/$name.err"
}
header() { head -1 "$TMP/$1.jsonl"; }

hunt one
tap_eq $? 0 "defaults only: hunch run --batch exits 0"
tap_eq "$(header one | jq -c '.hypotheses == $d[0]' --slurpfile d "$defaults")" true \
	"defaults only: the header's hypotheses are the defaults' document"
tap_eq "$(header one | jq -r 'has("hypotheses_files")')" false \
	"defaults only: no hypotheses_files"
tap_eq "$(header one | jq -r '.tunables.PC_CPUThreshold')" 0.3 \
	"defaults only: tunables hold every value in effect (PC_CPUThreshold 0.3)"

# A hypothesis only this file defines, true for any program: a replay
# without the file's document could not report it.
cat >"$TMP/extra.json" <<'JSON'
{ "version": 1, "set": { "PC_SyncThreshold": 0.25 },
  "hypotheses": { "Watched": { "parent": "topLevelHypothesis",
    "description": "A test hypothesis: true while one process runs.",
    "metric": { "op": "/", "inputs": [ "active_processes",
      { "metric": "active_processes", "focus": "top" } ] },
    "threshold": "PC_CPUThreshold", "compare": "gt", "expand": "whyOnly" } } }
JSON
# The report must have concluded Watched: the program runs long (a fixed
# 2 or 5 s were not always enough at load 10 on 2 CPUs) and is killed
# when the search has nothing left to test.
SECS=60 hunt two --kill-at-end --hypotheses "$TMP/extra.json" \
	--set PC_CPUThreshold=0.5
tap_eq $? 0 "two files and --set: exits 0"
tap_eq "$(header two | jq -r '.hypotheses')" null \
	"two files: no single hypotheses document"
tap_eq "$(header two | jq -r '[.hypotheses_files[].file] | map(split("/")[-1]) | join(" ")')" \
	"default.json extra.json" "two files: hypotheses_files in load order"
tap_eq "$(header two | jq -c '.hypotheses_files[1].document.set')" \
	'{"PC_SyncThreshold":0.25}' "two files: the second file's whole document"
tap_ok $(grep -q '^ 1\. Watched' "$TMP/two.txt"; echo $?) \
	"two files: the live report has the second file's hypothesis as a bottleneck"
tap_eq "$(header two | jq -r '[.tunables.PC_CPUThreshold, .tunables.PC_SyncThreshold] | join(" ")')" \
	"0.5 0.25" "two files: --set and the file's set in tunables"
rm "$TMP/extra.json"
"$HUNCH" replay --batch "$TMP/two.jsonl" >"$TMP/two.replay" 2>"$TMP/two.rerr"
tap_eq $? 0 "two files: the replay exits 0 with extra.json gone"
# (the live output has the program's own two lines first)
grep -v '^bn_sleepy' "$TMP/two.txt" >"$TMP/two.report"
tap_ok $(cmp -s "$TMP/two.report" "$TMP/two.replay"; echo $?) \
	"two files: the replayed report is byte-identical to the live one"
jq -c '.hypotheses_files[1].document = "oops"' <(header two) >"$TMP/bad.jsonl"
tail -n +2 "$TMP/two.jsonl" >>"$TMP/bad.jsonl"
"$HUNCH" replay --batch "$TMP/bad.jsonl" >/dev/null 2>"$TMP/bad.err"
tap_eq $? 1 "a header whose second document is not one: exit 1"
tap_ok $(grep -q "^hunch replay: .*extra\.json" "$TMP/bad.err"; echo $?) \
	"  and the message names the recorded file: $(head -1 "$TMP/bad.err")"
tap_done
