#!/bin/bash
# test-fork.sh FORKERS PIPELINE - hunch follows the program's child
# processes (real programs, tests/targets/bn_forkers.c and
# bn_pipeline.c, -O2 PIE):
# - bn_forkers: 3 forked workers compute in bnfk_work while main waits in
#   waitpid: the CPU findings name worker processes and bnfk_work, never
#   the parent; no worker thread wants more than one CPU; every worker
#   is a /Process/<pid> in the journal, retired at its end; the replay
#   prints the same report.
# - bn_forkers --no-wait (the program exits at once): the search goes on
#   while the workers live, and names them; each end is journaled.
# - --no-follow: only the parent is a process of the search.
# - bn_pipeline: writer | reader, the work planted in the reader: the CPU
#   findings name the reader's process only; the spread of CPU across the
#   3 processes has the reader at its max, a load imbalance; the report
#   lists the 3 processes; the replay prints the same report.
# - no-wait also: each worker's end (exited, status 0, when) in the JSON
#   and text reports and the journal.
# - bn_forkers --delay: workers forked while the parent is patched keep
#   what they inherited, counting into a segment of their own (each maps
#   memfd:hunch-shm-kid, none the program's segment); no worker is
#   traced or stopped.  (--no-follow: the workers carry none of the
#   parent's patches.)
# - SIGKILL of hunch mid-search: every process finishes with its usual
#   output.
# - attach --tree and its detach: every byte restored in every process,
#   none left traced; the program finishes with its usual output.
# - attach --follow with workers forked under hunch (each maps its own
#   segment), then the detach at the time limit while they run: every
#   byte restored in every process, none traced or stopped.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
forkers=$1
pipeline=$2
TMP=$(mktemp -d -p "$HUNCH_BUILD_ROOT" e2e-fork.XXXXXX)
trap '[ -n "${E2E_KEEP:-}" ] && echo "# kept $TMP" || rm -rf "$TMP"' EXIT
export TMPDIR=$TMP XDG_STATE_HOME=$TMP/state
textcmp="python3 $HUNCH_SOURCE_ROOT/tests/e2e/textcmp.py"

# The /Process/<pid> of every CPU bottleneck in a JSON report, sorted.
cpu_pids() {
	jq -r '.bottlenecks[] | select(.hypothesis == "CPUbound" or
		.hypothesis == "CPUdemand") | .focus[1]' "$1" |
		sed -n 's|^/Process/\([0-9]*\).*|\1|p' | sort -u
}
# wait_for FILE REGEX: up to 60 s for a line to appear.
wait_for() {
	for _ in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# wait_gone PID: up to 60 s for a process to end.
wait_gone() {
	for _ in $(seq 600); do
		[ -d "/proc/$1" ] || return 0
		sleep 0.1
	done
	return 1
}
# traced_or_stopped PID...: how many are traced or stopped now.
traced_or_stopped() {
	local n=0 p
	for p in "$@"; do
		[ -r "/proc/$p/status" ] || continue
		awk '/^TracerPid:/ { t = $2 } /^State:/ { s = $2 }
		     END { exit !(t != 0 || s == "t" || s == "T") }' \
			"/proc/$p/status" && n=$((n + 1))
	done
	echo $n
}

# --- bn_forkers: the workers and their hot function ---
# The workers compute 20 s: longer than an experiment may run without a
# conclusion (maxConclusionTime, 15 s).  On a loaded machine the 3
# workers together get about 0.3-0.4 CPUs, inside the hysteresis band
# of CPUbound's threshold (0.3), so the top-level CPUbound may need all
# of that time; a job shorter than it ended first and the search was,
# rightly, incomplete (exit 3, "the target ended before it concluded").
d=$TMP/forkers
mkdir -p "$d"
"$HUNCH" run --batch --time-limit 40 --journal "$d/j.jsonl" \
	--report "$d/live.json" -- "$forkers" --seconds 20 \
	> "$d/live.out" 2> "$d/live.err"
tap_eq $? 0 "forkers: hunch run --batch exits 0"
sed -n '/^hunch report: /,$p' "$d/live.out" > "$d/live.txt"
parent=$(jq -r '.target.pid' "$d/live.json")
workers=$(sed -n 's/^worker [0-2] pid //p' "$d/live.err" | sort -u)
tap_eq "$(echo "$workers" | wc -l)" 3 "forkers: 3 workers forked"
tap_eq "$(grep -c '^bn_forkers done$' "$d/live.out")" 1 \
	"forkers: the program finished with its usual output"
named=$(cpu_pids "$d/live.json")
tap_diag "parent $parent, workers $(echo $workers), named $(echo $named)"
tap_ok $([ -n "$named" ] && [ -z "$(comm -23 <(echo "$named") <(echo "$workers"))" ]; echo $?) \
	"forkers: the CPU findings name worker processes, and only them"
tap_eq "$(jq -r '[.bottlenecks[] | select(.focus[1] | startswith("/Process/'"$parent"'"))] | length' "$d/live.json")" 0 \
	"forkers: no finding names the parent"
tap_ok $(jq -e '[.bottlenecks[] | select(.focus[0] | endswith("/bn_forkers.c/bnfk_work")) |
	select(.focus[1] | startswith("/Process/'"$parent"'") | not)] | length > 0' \
	"$d/live.json" > /dev/null; echo $?) \
	"forkers: a finding names bnfk_work in a worker process"
# A worker's thread wants at most one CPU: its CPU over its own share,
# not over the whole job's (which read one worker thread over a CPU).
tap_eq "$(jq -r '[.bottlenecks[] | select(.hypothesis == "CPUdemand") |
	select(.focus[1] | test("^/Process/[0-9]+/[0-9]+")) |
	select(.value > 1.001)] | length' "$d/live.json")" 0 \
	"forkers: no worker thread wants more than 1 CPU ($(jq -r '[.bottlenecks[] |
	select(.hypothesis == "CPUdemand") | select(.focus[1] | test("^/Process/[0-9]+/[0-9]+")) |
	.value] | map(tostring) | join(" ")' "$d/live.json"))"
tap_eq "$(jq -r 'select(.t == "resource" and .kind == "process" and .op == "add") | .pid' "$d/j.jsonl" | sort -u)" \
	"$(echo "$parent"; echo "$workers")" \
	"forkers: the journal adds the parent and the 3 workers as processes"
# The report comes after the job: each of its 4 processes exited 0.
tap_eq "$(jq -r '.processes[] | "\(.end) \(.status) \(.end_s != null)"' "$d/live.json")" \
	"$(printf 'exited 0 true\n%.0s' 1 2 3 4)" \
	"forkers: the report lists the program and the 3 workers exited, status 0, and when"
"$HUNCH" replay --batch "$d/j.jsonl" > "$d/replay.txt" 2> "$d/replay.err"
tap_eq $? 0 "forkers: hunch replay --batch exits 0"
tap_ok $(cmp -s "$d/live.txt" "$d/replay.txt"; echo $?) \
	"forkers: the replayed report is byte-identical to the live one"

# --- the program ends first: the search goes on with its children ---
# The workers compute 16 s, past maxConclusionTime (as above): the
# search reaches their code (bnfk_work) from their stack samples a level
# below their processes and threads.
d=$TMP/nowait
mkdir -p "$d"
"$HUNCH" run --batch --time-limit 40 --journal "$d/j.jsonl" \
	--report "$d/live.json" -- "$forkers" --seconds 16 --no-wait \
	> "$d/live.out" 2> "$d/live.err"
tap_eq $? 3 "no-wait: exits 3 (what needs the program's instrumentation could not be enabled)"
sed -n '/^hunch report: /,$p' "$d/live.out" > "$d/live.txt"
parent=$(jq -r '.target.pid' "$d/live.json")
workers=$(sed -n 's/^worker [0-2] pid //p' "$d/live.err" | sort -u)
named=$(cpu_pids "$d/live.json")
tap_ok $([ -n "$named" ] && [ -z "$(comm -23 <(echo "$named") <(echo "$workers"))" ]; echo $?) \
	"no-wait: the CPU findings found after the program ended name workers only"
tap_ok $(jq -e '[.bottlenecks[] | select(.focus[0] | test("/bn_forkers.c/bnfk_work(er)?$"))] | length > 0' \
	"$d/live.json" > /dev/null; echo $?) \
	"no-wait: and the workers' code, from their stack samples"
# The workers end at 16 s.  A search that completes before them follows
# the job to its end (batch mode waits for a launched job anyway): the
# report is made when the last worker ended, and gives each one's real
# end; the journal retires the program and the 3 workers, the text
# agrees.
tap_eq "$(jq -r '.end.search' "$d/live.json")" "target ended" \
	"no-wait: the search ended with the job (followed after it completed)"
tap_eq "$(jq -r '.processes[] | select(.pid != '"$parent"') |
	"\(.end) \(.status) \(.end_s != null)"' "$d/live.json")" \
	"$(printf 'exited 0 true\n%.0s' 1 2 3)" \
	"no-wait: the report lists each of the 3 workers exited, status 0, and when"
tap_eq "$(jq -r 'select(.t == "resource" and .kind == "process" and .op == "retire") | .pid' "$d/j.jsonl" | sort)" \
	"$( (echo "$parent"; echo "$workers") | sort)" \
	"no-wait: the journal retires the program and the 3 workers"
tap_eq "$(for w in $workers; do
	grep -c "^  pid $w: exited with status 0 at [0-9.]* s\$" "$d/live.txt"; done)" \
	"$(printf '1\n%.0s' 1 2 3)" \
	"no-wait: the text report says each worker exited with status 0, and when"
tap_eq "$(grep -c 'running at the end of the search' "$d/live.txt")" 0 \
	"no-wait: no process is listed as running at the end of the search"
tap_eq "$(jq -r 'select(.t == "resource" and .op == "retire" and .kind == "process") |
	"\(.end) \(.code)"' "$d/j.jsonl" | sort -u)" "exited 0" \
	"no-wait: the journal carries every end it has: exited, status 0"
"$HUNCH" replay --batch "$d/j.jsonl" > "$d/replay.txt" 2> "$d/replay.err"
tap_eq $? 3 "no-wait: hunch replay --batch exits 3 too"
tap_ok $(cmp -s "$d/live.txt" "$d/replay.txt"; echo $?) \
	"no-wait: the replayed report is byte-identical to the live one"

# --- --no-follow: the parent alone ---
# The parent computes 16 s before it forks: its CPU, alone measured, is
# concluded within maxConclusionTime (15 s) whatever the load.
d=$TMP/nofollow
mkdir -p "$d"
"$HUNCH" run --batch --no-follow --time-limit 25 --journal "$d/j.jsonl" \
	--report "$d/live.json" -- "$forkers" --seconds 4 --delay 16 \
	> "$d/live.out" 2> "$d/live.err" &
hp=$!
wait_for "$d/live.err" '^worker 2 pid '
workers=$(sed -n 's/^worker [0-2] pid //p' "$d/live.err")
tap_eq "$(for w in $workers; do $textcmp "$w" | tail -1 | sed 's/.* differ //'; done | sort -u)" 0 \
	"no-follow: the workers are not followed, but carry none of the parent's patches either"
wait $hp
tap_eq $? 0 "no-follow: hunch run --batch --no-follow exits 0"
tap_eq "$(jq -r 'select(.t == "resource" and .kind == "process") | .pid' "$d/j.jsonl" | sort -u)" \
	"$(jq -r '.target.pid' "$d/live.json")" \
	"no-follow: the journal has the parent as its only process"
tap_eq "$(grep -c '^bn_forkers done$' "$d/live.out")" 1 \
	"no-follow: the program finished with its usual output"

# --- bn_pipeline: the reader ---
d=$TMP/pipeline
mkdir -p "$d"
"$HUNCH" run --batch --time-limit 40 --journal "$d/j.jsonl" \
	--report "$d/live.json" -- "$pipeline" --seconds 20 \
	> "$d/live.out" 2> "$d/live.err"
tap_eq $? 0 "pipeline: hunch run --batch exits 0"
sed -n '/^hunch report: /,$p' "$d/live.out" > "$d/live.txt"
reader=$(sed -n 's/^reader pid //p' "$d/live.err")
writer=$(sed -n 's/^writer pid //p' "$d/live.err")
parent=$(jq -r '.target.pid' "$d/live.json")
tap_diag "writer $writer, reader $reader, named $(cpu_pids "$d/live.json" | tr '\n' ' ')"
tap_eq "$(cpu_pids "$d/live.json")" "$reader" \
	"pipeline: the CPU findings name the reader process, and only it"
tap_eq "$(grep -c '^bn_pipeline done$' "$d/live.out")" 1 \
	"pipeline: the program finished with its usual output"
# The spread of CPU over the 3 processes: the reader at the top, an
# imbalance; the same in the text report.
tap_eq "$(jq -r '[.spread[] | select(.node | startswith("CPU")) |
	select(.node | contains(",/Process,"))][0] |
	"\(.processes) \(.max.pid) \(.imbalanced)"' "$d/live.json")" \
	"3 $reader true" \
	"pipeline: the spread of CPU across the 3 processes has the reader at its max, an imbalance"
tap_ok $(grep -q "^    load imbalance: process $reader has [0-9.]*x the mean of the 3\$" \
	"$d/live.txt"; echo $?) "pipeline: the text report names the reader's imbalance"
tap_eq "$(jq -r '.processes[].pid' "$d/live.json")" \
	"$(printf '%s\n' "$parent" "$writer" "$reader")" \
	"pipeline: the report lists the program, the writer and the reader"
"$HUNCH" replay --batch "$d/j.jsonl" > "$d/replay.txt" 2> "$d/replay.err"
tap_eq $? 0 "pipeline: hunch replay --batch exits 0"
tap_ok $(cmp -s "$d/live.txt" "$d/replay.txt"; echo $?) \
	"pipeline: the replayed report is byte-identical to the live one"
diff "$d/live.txt" "$d/replay.txt" | head -10 | while read -r l; do tap_diag "$l"; done

# --- the workers keep their inherited patches, in their own segments ---
# 4 s of the parent alone, then 14 s of workers: the CPU used changes
# midway, and the top-level CPUbound may need maxConclusionTime (15 s)
# to conclude; hunch must exit 0, so the job outlasts it.
d=$TMP/restore
mkdir -p "$d"
"$HUNCH" run --batch --time-limit 40 --no-journal --report "$d/live.json" \
	-- "$forkers" --seconds 14 --delay 4 > "$d/out" 2> "$d/err" &
hp=$!
wait_for "$d/err" '^worker 2 pid '
parent=$(sed -n 's/^hunch: searching .* (pid \([0-9]*\)).*/\1/p' "$d/err")
workers=$(sed -n 's/^worker [0-2] pid //p' "$d/err")
tap_ok $($textcmp "$parent" | grep -q ' differ [1-9]'; echo $?) \
	"restore: the parent's code carries hunch's patches"
tap_eq "$(for w in $workers; do grep -c ' /memfd:hunch-shm-kid ' "/proc/$w/maps"; done | sort -u)" 1 \
	"restore: each followed worker maps a segment of its own, not the program's"
tap_eq "$(for w in $workers; do grep -c ' /memfd:hunch-shm ' "/proc/$w/maps"; done | sort -u)" 0 \
	"restore: and none maps the program's segment"
tap_eq "$(traced_or_stopped $workers)" 0 "restore: no worker is traced or stopped"
wait $hp
tap_eq $? 0 "restore: hunch exits 0"
jq -r '.not_tested[] | select(.top_level) | "top level not tested: \(.hypothesis): \(.reason) (\(.detail))"' \
	"$d/live.json" 2>/dev/null | while read -r l; do tap_diag "$l"; done

# --- hunch SIGKILLed mid-search ---
d=$TMP/kill
mkdir -p "$d"
"$HUNCH" run --batch --no-journal -- "$forkers" --seconds 4 --delay 3 \
	> "$d/out" 2> "$d/err" &
hp=$!
wait_for "$d/err" '^worker 2 pid '
parent=$(sed -n 's/^hunch: searching .* (pid \([0-9]*\)).*/\1/p' "$d/err")
kill -KILL $hp
wait $hp 2>/dev/null
workers=$(sed -n 's/^worker [0-2] pid //p' "$d/err")
tap_eq "$(traced_or_stopped $parent $workers)" 0 \
	"kill: no process is traced or stopped after hunch is killed"
wait_gone "$parent"
tap_eq "$(cat "$d/out")" "bn_forkers workers=3 seconds=4
bn_forkers done" "kill: the program finished with its usual output"

# --- attach --tree, then a clean detach ---
d=$TMP/attach
mkdir -p "$d"
"$forkers" --seconds 20 > "$d/out" 2> "$d/err" &
pid=$!
wait_for "$d/err" '^worker 2 pid '
workers=$(sed -n 's/^worker [0-2] pid //p' "$d/err")
"$HUNCH" attach --batch --tree --time-limit 10 --no-journal \
	--report "$d/live.json" "$pid" > "$d/hunch.out" 2> "$d/hunch.err"
tap_eq $? 0 "attach: hunch attach --batch --tree exits 0"
tap_eq "$(grep -c -E 'search (time limit|complete); [0-9]+ experiments run' "$d/hunch.err")" 1 \
	"attach: the search ran to its time limit or completed before it"
tap_eq "$(grep -c "^hunch: detached from .* (pid $pid), which runs on\$" "$d/hunch.err")" 1 \
	"attach: and hunch detached"
tap_eq "$(jq -r '.bottlenecks[].focus[1]' "$d/live.json" |
	sed -n 's|^/Process/\([0-9]*\).*|\1|p' | grep -c "^$pid\$")" 0 \
	"attach: no finding names the parent"
tap_ok $([ -n "$(cpu_pids "$d/live.json")" ]; echo $?) \
	"attach: the workers it found under the parent are searched"
tap_eq "$(for p in $pid $workers; do $textcmp "$p" | tail -1 | sed 's/.* differ //'; done | sort -u)" 0 \
	"attach: after the detach no process's code differs from its files"
tap_eq "$(traced_or_stopped $pid $workers)" 0 "attach: none is traced or stopped"
wait $pid
tap_eq $? 0 "attach: the program exits 0"
tap_eq "$(cat "$d/out")" "bn_forkers workers=3 seconds=20
bn_forkers done" "attach: and printed its usual output"

# --- attach --follow, workers forked under hunch, then a clean detach ---
# The workers fork 3 s after the start, hunch attached: each maps a
# segment of its own; hunch detaches at its time limit while they run:
# every byte restored in every process, none traced or stopped.
d=$TMP/attachfork
mkdir -p "$d"
"$forkers" --seconds 20 --delay 3 > "$d/out" 2> "$d/err" &
pid=$!
"$HUNCH" attach --batch --follow --time-limit 9 --no-journal "$pid" \
	> "$d/hunch.out" 2> "$d/hunch.err" &
hp=$!
wait_for "$d/err" '^worker 2 pid '
workers=$(sed -n 's/^worker [0-2] pid //p' "$d/err")
tap_eq "$(for w in $workers; do grep -c ' /memfd:hunch-shm-kid ' "/proc/$w/maps"; done | sort -u)" 1 \
	"attach --follow: each worker forked under hunch maps a segment of its own"
wait $hp
tap_eq $? 0 "attach --follow: hunch exits 0 at its time limit"
tap_eq "$(grep -c "^hunch: detached from .* (pid $pid), which runs on\$" "$d/hunch.err")" 1 \
	"attach --follow: and detached"
tap_eq "$(for p in $pid $workers; do $textcmp "$p" | tail -1 | sed 's/.* differ //'; done | sort -u)" 0 \
	"attach --follow: after the detach no process's code differs from its files"
tap_eq "$(traced_or_stopped $pid $workers)" 0 "attach --follow: none is traced or stopped"
wait $pid
tap_eq $? 0 "attach --follow: the program exits 0"
tap_eq "$(cat "$d/out")" "bn_forkers workers=3 seconds=20
bn_forkers done" "attach --follow: and printed its usual output"
tap_done
