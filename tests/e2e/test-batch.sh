#!/bin/bash
# test-batch.sh - batch mode end to end: `hunch run --batch` hunts the
# bundled demo (exit 0, text report on stdout, JSON report that names what
# the search truly finds, the program's own output unchanged), attach
# --batch, the demo hunt with no program, the journal, a search that
# cannot test a hypothesis (incomplete, exit 3) beside a complete one
# (exit 0) and its replay, and the exit statuses of usage errors (1) and
# targets that cannot run (2).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
DEMO=$TARGETS_DIR/hunch-demo
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
export XDG_STATE_HOME=$TMP/state   # default journals land here

# The program's output: hunch's stdout up to its report.
program_part() { sed '/^hunch report: /,$d' "$1"; }
# The exit status a JSON report calls for: 3 when the search could not
# test a top-level hypothesis (a short --time-limit may stop it before
# one concluded), else 0.
status_of() { jq -r '.result | if startswith("incomplete") then 3 else 0 end' "$1"; }

# --- run --batch on the demo -------------------------------------------------
"$DEMO" --seconds 1 > "$TMP/direct.out"
"$HUNCH" run --batch --time-limit 8 --report "$TMP/r.json" -- \
	"$DEMO" --seconds 10 > "$TMP/run.out" 2> "$TMP/run.err"
rc=$?
# Complete, or incomplete only for a top-level hypothesis the time limit
# stopped before it concluded: FrequentSyncOperations on the demo runs
# near its threshold under load, and the sequential test waits for
# sufficientTime rather than take a few intervals for a finding.
complete=$(jq -r '[.. | objects | select(.top_level? == true) | .kind]
	| if all(. == "stopped") then "yes" else "no" end' "$TMP/r.json")
tap_eq "$rc $complete" "$(status_of "$TMP/r.json") yes" \
	"run --batch on the demo: exit 0, or 3 when a top-level hypothesis was stopped by the time limit"
tap_ok $(jq -e . "$TMP/r.json" > /dev/null; echo $?) "the report is valid JSON"
# The demo prints its configuration, so compare with the same --seconds.
sed 's/demo: 1 seconds/demo: 10 seconds/' "$TMP/direct.out" > "$TMP/want.out"
tap_ok $(program_part "$TMP/run.out" | cmp -s - "$TMP/want.out"; echo $?) \
	"the program's own output is byte-identical to running it directly"
tap_ok $(grep -q '^hunch report: ' "$TMP/run.out"; echo $?) \
	"the text report is on stdout"
tap_ok $(grep -q 'search time limit' "$TMP/run.err"; echo $?) \
	"progress on stderr ends with the time limit"
tap_ok $(grep -qE '^hunch: +[0-9.]+ s  finding: ' "$TMP/run.err"; echo $?) \
	"new findings appear on stderr as they are concluded"
tap_ok $(grep -q 'findings\?; [0-9]* experiments active.*cost' "$TMP/run.err"; echo $?) \
	"progress lines report findings and cost"
tap_eq "$(grep -c 'tested true for\|Search slowed\|had no data' "$TMP/run.err")" 0 \
	"without -v, no event log on stderr"
J=$(ls "$TMP"/state/hunch/journals/*.jsonl 2>/dev/null | head -1)
tap_ok $(jq -e -s '[.[] | select(.t == "log") | .text |
	select(test("tested true for"))] | length > 0' "$J" > /dev/null; echo $?) \
	"the event log is in the journal (log records)"
"$HUNCH" replay --batch --report "$TMP/rr.json" "$J" > /dev/null 2>&1
tap_ok $(jq -e -n --slurpfile a "$TMP/r.json" --slurpfile b "$TMP/rr.json" \
	'$a[0].findings == $b[0].findings and ($a[0].findings | length) > 0' \
	> /dev/null; echo $?) "the replay's report has the same findings"
tap_ok $(jq -e '[.findings[] | .text | length > 0] | all' "$TMP/r.json" \
	> /dev/null; echo $?) "every finding is said in words"
# Each bottleneck names the finding that groups it: that finding's
# evidence holds the bottleneck's hypothesis and focus, so a reader can
# print the finding's words for it.
tap_eq "$(jq -r '.findings as $f | [.bottlenecks[] | . as $b
	| select(.finding == null or ([$f[] | select(.rank == $b.finding)
		| .evidence[] | select(.hypothesis == $b.hypothesis
		and .focus == $b.focus)] | length) != 1)
	| "\(.hypothesis) \(.focus) -> \(.finding)"] | join("; ")' "$TMP/r.json")" "" \
	"every bottleneck names the finding whose evidence it is"
tap_eq "$(jq -r '.result | sub("^incomplete: [0-9]+ hypothes[ie]s? could not be tested$"; "bottleneck: " + $lead)' --arg lead "$(jq -r '.findings[0].text' "$TMP/r.json")" "$TMP/r.json")" "bottleneck: $(jq -r '.findings[0].text' "$TMP/r.json")" \
	"the report's result: the lead finding in its words (or incomplete, as above)"
tap_eq "$(jq -r '.end.stop' "$TMP/r.json")" "time limit" \
	"the report says the time limit stopped the search"
# What the search truly finds on the demo within 8 s: the contended
# mutex.  (CPUbound is not found: see tests/e2e/README.md.)
# How deep the search gets in 8 s depends on the machine's load (the
# values move with it): always the sync hypothesis (README.md).
tap_ok $(jq -e '[.bottlenecks[] | select(.hypothesis ==
	"ExcessiveSyncWaitingTime")] | length > 0' "$TMP/r.json" \
	> /dev/null; echo $?) "bottleneck: ExcessiveSyncWaitingTime"
# Not asserted (load-dependent): in most runs here it is refined to
# demo_worker and demo_lock within 8 s; under a load of ~7 on 2 CPUs some
# runs end with the refinements still running.
tap_diag "refined bottlenecks: $(jq -c '[.bottlenecks[] | select(.focus !=
	["/Code", "/Process", "/SyncObject", "/Files"]) | .focus]' \
	"$TMP/r.json")"
# (Values are not compared with thresholds: with hysteresis a true node
# may end just under its threshold, and a shed one has no value.)
tap_ok $(jq -e '[.bottlenecks[] | .chain | length > 0]
	| all' "$TMP/r.json" > /dev/null; echo $?) \
	"every bottleneck has its chain"
# Observed cost may pass the limit for a sample before shedding brings it
# back: bound the peak at twice the limit.
tap_ok $(jq -e '.cost.peak_observed <= 2 * .cost.limit and
	.cost.experiments_run > 0' "$TMP/r.json" > /dev/null; echo $?) \
	"observed cost stayed near the limit (peak $(jq .cost.peak_observed \
	"$TMP/r.json"), limit $(jq .cost.limit "$TMP/r.json"))"
tap_eq "$(ls "$TMP/state/hunch/journals" 2>/dev/null | wc -l)" 1 \
	"a journal is written by default (XDG state directory)"
jq -c '.bottlenecks[] | [.hypothesis, .focus, .value]' "$TMP/r.json" |
	while read -r b; do tap_diag "bottleneck $b"; done

# --- the bundled demo with no program -------------------------------------------
# 3 s of search: the top-level experiments may still be running when
# it stops (then the search is incomplete: exit 3, the report says so).
"$HUNCH" --batch --no-journal --time-limit 3 --kill-at-end \
	--report "$TMP/d.json" > "$TMP/demo.out" 2> "$TMP/demo.err"
tap_eq $? "$(status_of "$TMP/d.json")" \
	"hunch --batch (the demo): exit 0, or 3 when the report says incomplete"
tap_diag "the demo's 3 s search: $(jq -r .result "$TMP/d.json")"
tap_ok $(grep -q 'hunting the bundled demo' "$TMP/demo.err"; echo $?) \
	"it says it hunts the bundled demo"
tap_ok $(grep -q '^hunch report: ' "$TMP/demo.out"; echo $?) \
	"and prints its report"
tap_ok $(grep -q 'killed by signal 9' "$TMP/demo.err"; echo $?) \
	"--kill-at-end kills the demo when the search stops"

# --- the bundled demo, 10 s: quiet stderr, its three problems lead ---------
"$HUNCH" --batch --no-journal --report "$TMP/d10.json" > "$TMP/d10.out" \
	2> "$TMP/d10.err"
tap_eq $? "$(status_of "$TMP/d10.json")" "hunch --batch, 10 s: exit status"
n=$(wc -l < "$TMP/d10.err")
tap_ok $([ "$n" -le 15 ]; echo $?) "hunch --batch: $n lines of stderr (at most 15)"
tap_eq "$(grep -c '+[0-9.]*) ' "$TMP/d10.err")" 0 \
	"hunch --batch: one time stamp a line"
# The three problems lead the findings, in any order:
# CPU in demo_hot_loop (CPUbound, or CPUdemand when other load starves
# the demo of CPU; the line after says where it was found);
# waiting for demo_lock in demo_worker's threads (in demo_worker, or in
# libc's pthread_mutex_lock called from demo_worker);
# 1-byte I/O in demo_writer on its file (in demo_writer, or in libc's
# write called from demo_writer; bytes per operation to 2 decimals: a
# finding's value is the mean of the interval values of the run that
# concluded it, which read 0.999998 in one CI run).
# One other finding may rank among them: the lock workers' CPU in
# demo_locked_work, real CPU use the demo does under its lock (on 2 CPUs
# its 6 threads are starved, and what they want can outweigh the
# writer's I/O).  Anything else among the first four is a false finding.
tap_eq "$(jq -r 'def last_of(p): (p // "-") | split("/") | last;
	[.findings[0:4][] |
	if .hypothesis == "CPUbound" or .hypothesis == "CPUdemand"
	then "cpu " + last_of(.where.function)
	elif .hypothesis == "ExcessiveSyncWaitingTime" then "wait " +
		last_of(.where.object) + " " +
		last_of(.where.caller // .where.function) +
		" " + (.nthreads | tostring)
	elif .hypothesis == "TooManySmallIOOps" then "io " +
		last_of(.where.caller // .where.function) + " " +
		(.where.file // "" | test("^/Files/tmp/hunch-demo-") | tostring) +
		" " + ((.value * 100 | round) / 100 | tostring)
	else .hypothesis end] |
	(if length == 4 and (.[0:3] | index("cpu demo_locked_work") != null)
	 then map(select(. != "cpu demo_locked_work")) else .[0:3] end) |
	sort | join(", ")' "$TMP/d10.json")" \
	"cpu demo_hot_loop, io demo_writer true 1, wait demo_lock demo_worker 4" \
	"hunch --batch: the demo's three problems are the leading findings (with, at most, the lock workers' CPU in demo_locked_work among them)"
tap_diag "the CPU finding is at $(jq -r '[.findings[0:3][] | select(.hypothesis == "CPUbound" or .hypothesis == "CPUdemand") | .where.function // "-" | split("/") | last] | join(", ")' "$TMP/d10.json")"
jq -r '.findings[] | "\(.rank). \(.text)"' "$TMP/d10.json" |
	while read -r l; do tap_diag "finding $l"; done
# -v: the event log on stderr, one time stamp a line
"$HUNCH" run --batch -v --no-journal --time-limit 3 --kill-at-end -- \
	"$DEMO" --seconds 10 > /dev/null 2> "$TMP/v.err"
tap_ok $(grep -qE '^hunch: +[0-9.]+ s  (Search for the global phase started\.|[A-Za-z]+ tested (true|false) for <.*>)$' \
	"$TMP/v.err"; echo $?) "-v: the event log on stderr"
tap_eq "$(grep -c '+[0-9.]*) ' "$TMP/v.err")" 0 "-v: one time stamp a line"

# --- attach --batch ----------------------------------------------------------------
# 10 s: the attach (2 s of search) must end while the demo still runs,
# even when attaching takes long under load
"$DEMO" --seconds 10 > "$TMP/att-demo.out" &
dpid=$!
sleep 0.3
"$HUNCH" attach --batch --journal "$TMP/j.jsonl" --time-limit 2 \
	--report "$TMP/a.json" "$dpid" > "$TMP/att.out" 2> "$TMP/att.err"
tap_eq $? "$(status_of "$TMP/a.json")" \
	"attach --batch: exit 0, or 3 when the report says incomplete"
tap_diag "the attach's 2 s search: $(jq -r .result "$TMP/a.json")"
tap_ok $(grep -q "detached from .*which runs on" "$TMP/att.err"; echo $?) \
	"the attached program is detached and runs on"
wait "$dpid"
tap_eq $? 0 "the attached demo finishes by itself with status 0"
tap_ok $(grep -qx 'demo done' "$TMP/att-demo.out"; echo $?) \
	"and prints its own output"
tap_ok $(jq -e '.target' "$TMP/a.json" > /dev/null; echo $?) \
	"attach --batch --report writes the JSON report"
tap_ok $([ -s "$TMP/j.jsonl" ] && head -1 "$TMP/j.jsonl" | jq -e . \
	> /dev/null; echo $?) "--journal FILE writes the journal there"

# --- a hypothesis the search cannot test: incomplete, exit 3 -------------
# tests/e2e/untestable.json adds a top-level hypothesis whose metric
# counts calls of a function no program has: the live source refuses to
# enable it.  bn_sleepy has no bottleneck (bn_sleepy.truth), so every
# other hypothesis tests false and the search completes in seconds.
SLEEPY=$TARGETS_DIR/bn_sleepy-O2-pie
"$HUNCH" run --batch --time-limit 30 --kill-at-end \
	--hypotheses "$HUNCH_SOURCE_ROOT/tests/e2e/untestable.json" \
	--journal "$TMP/u.jsonl" --report "$TMP/u.json" -- \
	"$SLEEPY" --seconds 40 > "$TMP/u.out" 2> "$TMP/u.err"
tap_eq $? 3 "incomplete search: exit 3"
sed -n '/^hunch report: /,$p' "$TMP/u.out" > "$TMP/u.txt"
ABSENT='CallsAbsentFunction</Code,/Process,/SyncObject,/Files>'
REFUSAL='metric absent_calls on the whole program: none of its functions is in the program; nothing to measure here'
tap_eq "$(sed -n '/^Global phase/,$p' "$TMP/u.txt" | sed 1d)" \
" incomplete: 1 hypothesis could not be tested; of the others none tested true above its threshold
 not tested (neither true nor false: nothing is known of these):
 1. $ABSENT (top level): the source could not enable it ($REFUSAL)" \
	"incomplete: the text report says so, and why, in the source's words"
tap_eq "$(jq -r .result "$TMP/u.json")" \
	"incomplete: 1 hypothesis could not be tested" "incomplete: JSON result"
tap_eq "$(jq -c .not_tested "$TMP/u.json")" \
	"[{\"kind\":\"refused\",\"reason\":\"the source could not enable it\",\"detail\":\"$REFUSAL\",\"node\":8,\"hypothesis\":\"CallsAbsentFunction\",\"focus\":[\"/Code\",\"/Process\",\"/SyncObject\",\"/Files\"],\"top_level\":true,\"chain\":[\"$ABSENT\"]}]" \
	"incomplete: JSON not_tested"
tap_eq "$(jq -c '[.version, .end.search, (.bottlenecks | length),
	([.phases[0].nodes[] | select(.truth == "false")] | length)]' \
	"$TMP/u.json")" '[8,"completed",0,7]' \
	"incomplete: schema 8, the search completed, no bottleneck, the other 7 false"
"$HUNCH" replay --batch "$TMP/u.jsonl" > "$TMP/ur.txt" 2> /dev/null
tap_eq $? 3 "the replay of the incomplete search: exit 3"
tap_ok $(cmp -s "$TMP/u.txt" "$TMP/ur.txt"; echo $?) \
	"the replay prints the identical report"
# The same search without that hypothesis: complete, nothing true.
"$HUNCH" run --batch --no-journal --time-limit 30 --kill-at-end \
	--report "$TMP/c.json" -- "$SLEEPY" --seconds 40 > "$TMP/c.out" \
	2> /dev/null
tap_eq $? 0 "complete search with nothing true: exit 0"
tap_eq "$(jq -c '[.result, .end.search, (.not_tested | length)]' \
	"$TMP/c.json")" '["no bottleneck found","completed",0]' \
	"complete: no bottleneck found, nothing untested"
tap_ok $(grep -qx ' no bottleneck found: no hypothesis tested true above its threshold' \
	"$TMP/c.out"; echo $?) "complete: the text report says no bottleneck found"

# CPUbound itself untestable: tests/e2e/nocpu.json redefines cpu_inclusive
# as a timer at a function no program has, without "kernel": "cpu", so
# there is no point to put it at and nothing reads it from the kernel.
# The stripped bn_onebusy is CPU bound: the report must not say "no
# bottleneck found" of it.
"$HUNCH" run --batch --no-journal --time-limit 30 --kill-at-end \
	--hypotheses "$HUNCH_SOURCE_ROOT/tests/e2e/nocpu.json" \
	--report "$TMP/n.json" -- "$TARGETS_DIR/bn_onebusy-O2-pie-shipped" \
	--seconds 40 > "$TMP/n.out" 2> /dev/null
tap_eq $? 3 "CPUbound untestable: exit 3"
CPUREF='metric cpu_inclusive on the whole program: none of its functions is in the program; nothing to measure here'
tap_ok $(grep -qxF " 1. CPUbound</Code,/Process,/SyncObject,/Files> (top level): the source could not enable it ($CPUREF)" \
	"$TMP/n.out"; echo $?) "CPUbound untestable: the text report names it and why"
# (top-level ones: when the loaded machine starves the program, CPUdemand
# under CPUstarved needs cpu_inclusive too and is refused the same way)
tap_eq "$(jq -c '[.result, (.not_tested | map(select(.top_level)
	| [.hypothesis, .kind, .detail, .top_level]))]' "$TMP/n.json")" \
	"[\"incomplete: 1 hypothesis could not be tested\",[[\"CPUbound\",\"refused\",\"$CPUREF\",true]]]" \
	"CPUbound untestable: JSON result and not_tested"

# --- usage errors: exit 1 ------------------------------------------------------------
usage() {  # usage MESSAGE-REGEX NAME ARGS...
	local re=$1 name=$2
	shift 2
	"$HUNCH" "$@" > "$TMP/u.out" 2> "$TMP/u.err"
	tap_eq $? 1 "$name: exit 1"
	tap_ok $(grep -qE "$re" "$TMP/u.err"; echo $?) "$name: message"
}
usage 'name the program' "run --batch without a program" run --batch
usage 'time-limit needs a number' "--time-limit abc" \
	run --batch --time-limit abc -- "$DEMO"
usage 'need --batch' "--report without --batch" \
	run --report x.json -- "$DEMO"
usage 'nosuchtunable' "--set of an unknown tunable" \
	run --batch --no-journal --set nosuchtunable=1 -- "$DEMO"
usage 'nonexistent' "--hypotheses of a missing file" \
	run --batch --no-journal --hypotheses "$TMP/nonexistent.json" -- "$DEMO"
usage 'drop --no-rtlib' "--batch with --no-rtlib" \
	run --batch --no-rtlib -- "$DEMO"
usage "phase-at needs a number of seconds > 0 \\(at most 8\\), got 'abc'" \
	"--phase-at abc" run --batch --phase-at abc -- "$DEMO"
usage 'phase-at need --batch' "--phase-at without --batch" \
	run --phase-at 3 -- "$DEMO"

# --- targets that cannot be run or attached: exit 2 ------------------------------
"$HUNCH" run --batch --no-journal -- "$TMP/no-such-program" \
	> /dev/null 2> "$TMP/m.err"
tap_eq $? 2 "run --batch of a missing program: exit 2"
tap_ok $(grep -q 'no-such-program' "$TMP/m.err"; echo $?) \
	"and the message names it"
"$HUNCH" attach --batch --no-journal 999999 > /dev/null 2> "$TMP/p.err"
tap_eq $? 2 "attach --batch to a process that does not exist: exit 2"
tap_done
