#!/bin/bash
# test-pyframes.sh - Python-level frames on Debian's stripped python3.11
# (engine/eng_pyframes*, consultant/src_live_hintpy.c): perf record on
# pyhot.py (top -> middle -> hot, the CPU in hot) names the interpreter
# loop, _PyEval_EvalFrameDefault, as every Python program's; hunch's lead
# finding must name the Python function, `hot` in pyhot.py, estimated
# from stack samples, in the text report and in the JSON one (CPUbound,
# or CPUdemand where other load starves python: "want 0.97 CPUs ...,
# in `hot` (pyhot.py:6), called from `middle` (pyhot.py); using 0.60 CPUs
# (estimated from stack samples)").
# The finding stays at `hot` with hot's own CPU: the interpreter's C
# functions below it (PyNumber_Remainder for `%`) are not a where of
# their own (no node of the search is one under a Python function), and
# its CPU is at least 0.8 of the CPU the process really used, read from
# /proc while hunch ran (1 CPU on an idle machine, less when other load
# takes the CPUs).  It names the line of `%`, where the samples put most
# of hot's time, and the report's result is that finding, the same in
# the journal's replay.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3.11
SCRIPT="$HUNCH_SOURCE_ROOT/tests/e2e/pyhot.py"

perf record -q -e cpu-clock -F 999 -o "$TMP/perf.data" -- \
	timeout 3 "$PY" "$SCRIPT" > /dev/null 2> "$TMP/perf.err"
perf report -i "$TMP/perf.data" --stdio --sort sym 2> /dev/null |
	grep -v '^#' | grep '%' > "$TMP/perf.top"
tap_diag "perf's top self functions:"
head -3 "$TMP/perf.top" | tap_lines
tap_eq "$(awk 'NR == 1 { print $3 }' "$TMP/perf.top")" \
	_PyEval_EvalFrameDefault "perf names the interpreter loop"

LINE=$(grep -n 's += i \* i % 7' "$SCRIPT" | cut -d: -f1)
"$HUNCH" run --batch --report "$TMP/r.json" --kill-at-end --time-limit 15 \
	--journal "$TMP/j.jsonl" -- "$PY" "$SCRIPT" > "$TMP/out" 2> "$TMP/err" &
HPID=$!
# The CPU python really uses: its /proc stat from 3 s to 13 s of the run,
# or to its last reading when the search completes sooner and
# --kill-at-end ends it (a search that concludes everything early).
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
for ((i = 0; i < 50; i++)); do
	pid=$(sed -n 's/^hunch: searching .* (pid \([0-9]*\)).*/\1/p' "$TMP/err")
	[ -n "$pid" ] && break
	sleep 0.1
done
sleep 3; c0=$(ticks "$pid"); t0=$(date +%s.%N); c1=; t1=$t0
for ((i = 0; i < 20; i++)); do
	sleep 0.5
	c=$(ticks "$pid")
	[ -n "$c" ] || break
	c1=$c; t1=$(date +%s.%N)
done
wait "$HPID"
tap_eq "$?" 0 "hunch run --batch on python3.11 pyhot.py: exit 0"
real=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" \
	'BEGIN { if (a == "" || b == "") print "none"; else printf "%.2f", (b - a) / hz / (t1 - t0) }')
tap_diag "python used $real CPUs (/proc/$pid/stat, from 3 s for $(awk -v a="$t0" -v b="${t1:-$t0}" 'BEGIN { printf "%.1f", b - a }') s)"
tap_diag "hunch's findings:"
sed -n '/^findings, most impact first:/,/^$/p' "$TMP/out" | tap_lines
tap_eq "$(jq -r '.findings[0] | [(.hypothesis | test("^CPU(bound|demand)$")),
	.where.function] | map(tostring) | join(" ")' "$TMP/r.json")" \
	"true /Code/<python>/pyhot.py/hot" \
	"the JSON report's lead finding is CPU in the Python function hot"
tap_eq "$(jq -r '.findings[0].sampled' "$TMP/r.json")" true \
	"estimated from stack samples"
tap_ok $(grep -A1 '^findings, most impact first:' "$TMP/out" |
	 grep -qE "^ 1\\. .* in \`hot\` \\(pyhot\\.py:$LINE\\)[;,)( ].*\\(estimated from stack samples\\)\$"; echo $?) \
	"the text report's first finding names hot in pyhot.py, at line $LINE (s += i * i % 7)"
tap_ok $(jq -e --arg l "in \`hot\` (pyhot.py:$LINE)" '.findings[0].text | contains($l)' \
	"$TMP/r.json" > /dev/null; echo $?) "the JSON's lead finding names hot's line $LINE too"
# hot's own CPU: the lead's value for CPUbound; for CPUdemand (other load
# held the CPUs) the CPU it used, its CPUbound evidence in hot.
cpu=$(jq -r '.findings[0] | if .hypothesis == "CPUbound" then .value else
	([.evidence[] | select(.hypothesis == "CPUbound" and
	  .focus[0] == "/Code/<python>/pyhot.py/hot")][0].value // "none") end' "$TMP/r.json")
tap_diag "the lead finding's CPU in hot: $cpu"
tap_ok $(awk -v c="$cpu" -v r="$real" 'BEGIN { exit !(c != "none" && r != "none" && c >= 0.8 * r) }'; echo $?) \
	"hot's finding carries hot's CPU ($cpu), at least 0.8 of what python used ($real)"
# No node of the search is the interpreter's C code under a Python
# function: the where axis stops at the Python function.
tap_eq "$(jq '[.phases[].nodes as $ns | $ns[] | select(.focus[0] | startswith("/Code/python3.11/")) |
	select(any(.parents[]; . as $p | $ns[] | select(.id == $p) | .focus[0] | startswith("/Code/<python>/")))] | length' \
	"$TMP/r.json")" 0 "no node refines a Python function into the interpreter's C code"
tap_eq "$(jq -r '.result | sub("^incomplete: [0-9]+ hypothes[ie]s? could not be tested$"; "bottleneck: " + $lead)' \
	--arg lead "$(jq -r '.findings[0].text' "$TMP/r.json")" "$TMP/r.json")" \
	"bottleneck: $(jq -r '.findings[0].text' "$TMP/r.json")" \
	"the report's result is the lead finding (or incomplete)"
"$HUNCH" replay --batch --report "$TMP/rr.json" "$TMP/j.jsonl" > /dev/null 2>&1
tap_eq "$(jq -c '[.result, [.findings[].text]]' "$TMP/rr.json")" \
	"$(jq -c '[.result, [.findings[].text]]' "$TMP/r.json")" \
	"the journal's replay says the same result and findings, line included"
tap_done
