#!/bin/bash
# test-exec-static.sh BUSY-STATIC - a wrapper that execs a program hunch
# cannot instrument: `sh -c 'exec BUSY-STATIC'`, where BUSY-STATIC is
# bn_onebusy linked -static (no dynamic linker, so no runtime library).
# hunch follows the exec with the kernel's measures only: CPUbound is
# concluded from the kernel's CPU time, the hypotheses that need
# instrumentation are not tested and say why, the report and the journal
# say that the exec was followed with kernel-side measures, no inferior
# call was tried, and the replay prints the same report.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
prog=$1
TMP=$(mktemp -d -p "$HUNCH_BUILD_ROOT" e2e-exec-static.XXXXXX)
trap '[ -n "${E2E_KEEP:-}" ] && echo "# kept $TMP" || rm -rf "$TMP"' EXIT
export TMPDIR=$TMP XDG_STATE_HOME=$TMP/state

"$HUNCH" run --batch --time-limit 6 --kill-at-end \
	--journal "$TMP/j.jsonl" --report "$TMP/live.json" -- \
	sh -c 'exec "$0" "$@"' "$prog" --seconds 30 \
	> "$TMP/live.out" 2> "$TMP/live.err"
tap_eq $? 3 "hunch run --batch exits 3: the search is incomplete"
sed -n '/^hunch report: /,$p' "$TMP/live.out" > "$TMP/live.txt"
tap_eq "$(head -1 "$TMP/live.out")" \
	"bn_onebusy: 30 seconds, 1 busy thread, 2 idle threads" \
	"the static program runs and prints its first line"
tap_eq "$(jq -c .target.exec "$TMP/live.json")" \
	'{"count":1,"measures":"kernel"}' \
	"the JSON report: one exec, followed with kernel-side measures"
tap_eq "$(grep -c '^exec: the program replaced its image 1 time; hunch followed it with kernel-side measures only (the new program cannot be instrumented)$' "$TMP/live.txt")" 1 \
	"the text report says so"
tap_eq "$(jq -c 'select(.t == "target" and .event == "exec") | .code' \
	"$TMP/j.jsonl")" 1 "the journal has the exec, kernel-side (code 1)"
tap_eq "$(jq -c '[.bottlenecks[].hypothesis] | unique' "$TMP/live.json")" \
	'["CPUbound"]' "CPUbound, from the kernel's CPU time, and nothing else"
tap_eq "$(jq -r '[.bottlenecks[].chain[0]] | unique | .[]' "$TMP/live.json")" \
	'CPUbound</Code,/Process,/SyncObject,/Files>' \
	"CPUbound is true for the whole program, where its chain starts"
tap_diag "deepest: $(jq -c '[.bottlenecks[].focus] | last' "$TMP/live.json")"
tap_eq "$(jq -c '[.not_tested[] | select(.top_level) | .hypothesis] | sort' \
	"$TMP/live.json")" \
	'["ExcessiveAllocationTime","ExcessiveIOBlockingTime","ExcessiveSyncWaitingTime","FrequentSyncOperations"]' \
	"the hypotheses that need instrumentation are not tested"
why="busy-static cannot be instrumented (a static program: no dynamic linker to load the runtime library with): hunch follows it with the kernel's measures only (CPU time, thread states)"
tap_eq "$(jq -r '[.not_tested[] | select(.top_level) | .detail] | unique | .[]' \
	"$TMP/live.json")" "$why" "and each says why"
tap_eq "$(grep -c 'inferior call' "$TMP/live.err" "$TMP/live.txt" |
	awk -F: '{ n += $2 } END { print n }')" 0 \
	"no inferior call was tried in the program"

"$HUNCH" replay --batch "$TMP/j.jsonl" > "$TMP/replay.txt" 2> "$TMP/replay.err"
tap_eq $? 3 "hunch replay --batch exits 3 too"
tap_ok $(cmp -s "$TMP/live.txt" "$TMP/replay.txt"; echo $?) \
	"the replayed text report is byte-identical to the live one"
diff "$TMP/live.txt" "$TMP/replay.txt" | head -10 |
	while read -r l; do tap_diag "$l"; done
tap_done
