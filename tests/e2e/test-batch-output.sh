#!/bin/bash
# test-batch-output.sh - batch mode journals a launched program's output
# while the program's bytes still reach hunch's stdout and
# stderr exactly as without hunch, and still do after hunch is SIGKILLed;
# a reader of hunch's output that goes away (`| true`) does not kill
# hunch mid-search: it ends the program it was told to end and says
# that the report was lost.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
BIN=$HUNCH_BUILD_ROOT/tests/e2e
OUTLINES=$BIN/outlines
SPIN1=$BIN/spin1
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
export XDG_STATE_HOME=$TMP/state

# The program's output: hunch's stdout up to its report.
program_part() { sed '/^hunch report: /,$d' "$1"; }
# The program's stderr: hunch's stderr without hunch's own lines.
program_err() { grep -av '^hunch: ' "$1"; }
# A stream's bytes rebuilt from the journal's output records.
journal_bytes() {  # journal_bytes JOURNAL stdout|stderr
	jq -r --arg s "$2" 'select(.t == "output" and .stream == $s) |
		"\(.eol != false) \(.b64 // (.text | @base64))"' "$1" |
	while read -r eol b; do
		printf %s "$b" | base64 -d
		[ "$eol" = true ] && printf '\n'
	done
}

# --- a run to its end --------------------------------------------------------
"$OUTLINES" 20 10 > "$TMP/direct.out" 2> "$TMP/direct.err"
tap_eq $? 3 "the target run directly exits with status 3"
"$HUNCH" run --batch --journal "$TMP/j.jsonl" -- "$OUTLINES" 20 10 \
	> "$TMP/run.out" 2> "$TMP/run.err"
# The program is gone within a second, before any experiment could
# conclude: the search is incomplete (docs/report-schema.md), exit 3.
tap_eq $? 3 "run --batch --journal: exit 3 (the program ended before any hypothesis was tested)"
tap_ok $(grep -q 'exited with status 3' "$TMP/run.err"; echo $?) \
	"hunch says the program exited with status 3"
# The report follows the program's last stdout bytes, which have no
# newline: cut the report (its own line) off at the program's end.
tap_ok $(grep -q '^no newlinehunch report: ' "$TMP/run.out"; echo $?) \
	"the report is on stdout, after the program's unfinished line"
tap_ok $(head -c "$(stat -c %s "$TMP/direct.out")" "$TMP/run.out" |
	cmp -s - "$TMP/direct.out"; echo $?) \
	"hunch's stdout starts with the program's stdout, byte-identical"
tap_ok $(tail -c +"$(($(stat -c %s "$TMP/direct.out") + 1))" \
	"$TMP/run.out" | grep -q '^hunch report: '; echo $?) \
	"the report comes right after the program's output"
tap_ok $(program_err "$TMP/run.err" | cmp -s - "$TMP/direct.err"; echo $?) \
	"hunch's stderr has the program's stderr, byte-identical"
journal_bytes "$TMP/j.jsonl" stdout > "$TMP/j.out"
journal_bytes "$TMP/j.jsonl" stderr > "$TMP/j.err"
tap_ok $(cmp -s "$TMP/j.out" "$TMP/direct.out"; echo $?) \
	"the journal's stdout records are the program's stdout bytes"
tap_ok $(cmp -s "$TMP/j.err" "$TMP/direct.err"; echo $?) \
	"the journal's stderr records are the program's stderr bytes"
tap_eq "$(jq -c 'select(.t == "output" and .stream == "stdout")' \
	"$TMP/j.jsonl" | wc -l)" 23 \
	"23 stdout records: 20 lines, latin1, empty, no newline"
tap_eq "$(jq -c 'select(.t == "output" and .b64)' "$TMP/j.jsonl" | wc -l)" \
	1 "the one line that is not UTF-8 is base64"
tap_eq "$(jq -c 'select(.t == "output" and .eol == false) | .text' \
	"$TMP/j.jsonl")" '"no newline"' \
	"only the last line, with no newline, has eol false"
"$HUNCH" replay --batch "$TMP/j.jsonl" > "$TMP/replay.out" 2> /dev/null
tap_ok $(tail -c +"$(($(stat -c %s "$TMP/direct.out") + 1))" \
	"$TMP/run.out" | cmp -s - "$TMP/replay.out"; echo $?) \
	"replay --batch of the journal prints the live report, byte-identical"

# --- hunch SIGKILLed while the program prints --------------------------------
"$BIN/reap" "$TMP/reaped" "$HUNCH" run --batch --journal "$TMP/k.jsonl" \
	-- "$OUTLINES" 150 20 > "$TMP/kill.out" 2> "$TMP/kill.err" &
reaper=$!
for _ in $(seq 200); do
	[ "$(grep -c '^out ' "$TMP/kill.out" 2>/dev/null)" -ge 20 ] && break
	sleep 0.1
done
hpid=$(awk '$1 == "child" { print $2 }' "$TMP/reaped")
ppid=$(sed -n 's/^hunch: searching .* (pid \([0-9]*\)).*/\1/p' "$TMP/kill.err")
tap_ok $([ -n "$hpid" ] && [ -n "$ppid" ]; echo $?) \
	"hunch $hpid launched the program $ppid"
n=$(grep -c '^out ' "$TMP/kill.out")
kill -9 "$hpid"
tap_ok $([ "$n" -lt 150 ]; echo $?) "hunch killed at line $n of 150"
wait "$reaper"
tap_eq "$(awk -v p="$hpid" '$1 == p { print $2, $3 }' "$TMP/reaped")" \
	"signal 9" "hunch died of SIGKILL"
tap_eq "$(awk -v p="$ppid" '$1 == p { print $2, $3 }' "$TMP/reaped")" \
	"exit 3" "the program finished on its own with status 3"
tap_eq "$(grep -c '^out [0-9]' "$TMP/kill.out")" 150 \
	"all 150 stdout lines reached hunch's stdout"
tap_eq "$(grep -c '^err [0-9]' "$TMP/kill.err")" 150 \
	"all 150 stderr lines reached hunch's stderr"
"$OUTLINES" 150 0 > "$TMP/direct150.out" 2> "$TMP/direct150.err"
tap_ok $(cmp -s "$TMP/kill.out" "$TMP/direct150.out"; echo $?) \
	"stdout byte-identical to a direct run (no report: hunch died)"
tap_ok $(program_err "$TMP/kill.err" | cmp -s - "$TMP/direct150.err"; \
	echo $?) "stderr byte-identical to a direct run"

# --- 2>&1: one file for both streams keeps the order the program wrote -------
# A direct run into one file is the order a terminal or `2>&1` shows;
# through hunch the program gets one pipe for both, so it is the same.
"$OUTLINES" 30 2 > "$TMP/dm.out" 2>&1
"$HUNCH" run --batch --journal "$TMP/m.jsonl" -- "$OUTLINES" 30 2 \
	> "$TMP/m.out" 2>&1
tap_eq $? 3 "2>&1: run --batch --journal: exit 3 (incomplete, as above)"
# hunch's own lines are whole lines among the program's (its last line,
# with no newline, runs into hunch's next one: cut at the direct size)
tap_ok $(grep -av '^hunch: ' "$TMP/m.out" |
	head -c "$(stat -c %s "$TMP/dm.out")" | cmp -s - "$TMP/dm.out";
	echo $?) "2>&1: the program's lines in the order written, byte-identical to a direct run >f 2>&1"
tap_ok $(grep -a -m1 -n '^err 1$' "$TMP/m.out" | cut -d: -f1 |
	{ read -r e; o=$(grep -a -m1 -n '^out 2$' "$TMP/m.out" | cut -d: -f1);
	  [ "$e" -lt "$o" ]; }; echo $?) \
	"2>&1: 'err 1' comes before 'out 2', as the program wrote them"
journal_bytes "$TMP/m.jsonl" stdout > "$TMP/jm.out"
tap_ok $(cmp -s "$TMP/jm.out" "$TMP/dm.out"; echo $?) \
	"2>&1: the journal's output records, in journal order, are the merged bytes"
tap_eq "$(jq -c 'select(.t == "output" and .stream == "stderr")' \
	"$TMP/m.jsonl" | wc -l)" 0 \
	"2>&1: every record is stdout (the streams were one)"
tap_eq "$(jq -r 'select(.t == "output") | .text' "$TMP/m.jsonl" |
	sed -n '1,4p' | tr '\n' ,)" "out 1,err 1,out 2,err 2," \
	"2>&1: the journal's first records: out 1, err 1, out 2, err 2"
# Two different files: two pipes, each stream to its own file as before.
"$HUNCH" run --batch --journal "$TMP/s.jsonl" -- "$OUTLINES" 5 0 \
	> "$TMP/s.out" 2> "$TMP/s.err"
tap_eq "$(jq -c 'select(.t == "output" and .stream == "stderr")' \
	"$TMP/s.jsonl" | wc -l)" 6 \
	"separate files: stderr records kept apart (5 lines and 'err end')"

# --- no journal: nothing between the program and its output -------------------
"$HUNCH" run --batch --no-journal -- "$OUTLINES" 5 0 > "$TMP/nj.out" \
	2> "$TMP/nj.err"
"$OUTLINES" 5 0 > "$TMP/d5.out" 2> "$TMP/d5.err"
tap_ok $(head -c "$(stat -c %s "$TMP/d5.out")" "$TMP/nj.out" |
	cmp -s - "$TMP/d5.out"; echo $?) "--no-journal: stdout as before"
# --- the reader goes away ------------------------------------------------------
# spin1 spins until its stdin ends: a FIFO that this shell holds open
# for writing never does, so only hunch's --kill-at-end ends it.
mkfifo "$TMP/in"
exec 7<>"$TMP/in"
# The journal header's pid, and whether it is still alive once hunch
# has returned (hunch launched it, so it is reaped by then).
gone() { p=$(head -1 "$1" | jq -r .pid); [ -n "$p" ] && ! kill -0 "$p" 2>/dev/null; }
# stderr to a pipe whose reader has gone: the progress lines fail.
"$HUNCH" run --batch --journal "$TMP/pa.jsonl" --time-limit 2 --kill-at-end \
	-- "$SPIN1" < "$TMP/in" 2>&1 > "$TMP/pa.out" | true
tap_eq "${PIPESTATUS[0]}" 0 "stderr's reader gone: hunch was not killed by SIGPIPE and exits 0"
tap_ok $(gone "$TMP/pa.jsonl"; echo $?) \
	"stderr's reader gone: --kill-at-end still ended the program"
tap_ok $(grep -q '^hunch report: ' "$TMP/pa.out"; echo $?) \
	"stderr's reader gone: the report is on stdout"
# stdout to a pipe whose reader has gone: the report cannot be written.
"$HUNCH" run --batch --journal "$TMP/pb.jsonl" --time-limit 2 --kill-at-end \
	-- "$SPIN1" < "$TMP/in" 2> "$TMP/pb.err" | true
tap_eq "${PIPESTATUS[0]}" 1 "stdout's reader gone: hunch exits 1 (the report was lost)"
tap_ok $(gone "$TMP/pb.jsonl"; echo $?) \
	"stdout's reader gone: --kill-at-end still ended the program"
tap_ok $(grep -qxF "hunch: cannot write the report to standard output: Broken pipe; the journal keeps the search: hunch replay --batch $TMP/pb.jsonl" "$TMP/pb.err"; echo $?) \
	"stdout's reader gone: hunch names the lost report and the journal that keeps it"
exec 7>&-
tap_done
