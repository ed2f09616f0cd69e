#!/bin/bash
# test-exec-static.sh BUSY-STATIC SPIN32 - wrappers that exec a program
# hunch cannot instrument: `sh -c 'exec BUSY-STATIC'`, BUSY-STATIC being
# bn_onebusy linked -static (no dynamic linker, so no runtime library),
# and `env SPIN32`, a 32-bit x86 program (spin32.s).  hunch follows each
# exec with the kernel's measures only: CPUbound is concluded from the
# kernel's CPU time, the hypotheses that need instrumentation are not
# tested and say why, the report and the journal say that the exec was
# followed with kernel-side measures, no inferior call was tried, and
# the replay prints the same report.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
static=$1
spin32=$2
TMP=$(mktemp -d -p "$HUNCH_BUILD_ROOT" e2e-exec-static.XXXXXX)
trap '[ -n "${E2E_KEEP:-}" ] && echo "# kept $TMP" || rm -rf "$TMP"' EXIT
export TMPDIR=$TMP XDG_STATE_HOME=$TMP/state

# hunt NAME WHY COMMAND...: the checks above; WHY is the reason every
# hypothesis that needs instrumentation gives.
hunt() {
	local name=$1 why=$2 d=$TMP/$1
	shift 2
	mkdir -p "$d"
	"$HUNCH" run --batch --time-limit 6 --kill-at-end \
		--journal "$d/j.jsonl" --report "$d/live.json" -- "$@" \
		> "$d/live.out" 2> "$d/live.err"
	tap_eq $? 3 "$name: hunch run --batch exits 3: the search is incomplete"
	sed -n '/^hunch report: /,$p' "$d/live.out" > "$d/live.txt"
	tap_eq "$(jq -c .target.exec "$d/live.json")" \
		'{"count":1,"measures":"kernel"}' \
		"$name: the JSON report: one exec, followed with kernel-side measures"
	tap_eq "$(grep -c '^exec: the program replaced its image 1 time; hunch followed it with kernel-side measures only (the new program cannot be instrumented)$' "$d/live.txt")" 1 \
		"$name: the text report says so"
	tap_eq "$(jq -c 'select(.t == "target" and .event == "exec") | .code' \
		"$d/j.jsonl")" 1 "$name: the journal has the exec, kernel-side (code 1)"
	# the kernel-side hypotheses: CPUbound, and under load CPUstarved
	# with its child CPUdemand (run-queue wait, also from the kernel)
	tap_eq "$(jq -c '[.bottlenecks[].hypothesis] | unique - ["CPUdemand"]' "$d/live.json")" \
		'["CPUbound"]' "$name: CPUbound, from the kernel's CPU time, and nothing else (but CPUdemand under load)"
	tap_eq "$(jq -r '[.bottlenecks[].chain[0]] | unique | .[]' "$d/live.json" | grep -v '^CPUstarved<')" \
		'CPUbound</Code,/Process,/SyncObject,/Files>' \
		"$name: CPUbound is true for the whole program, where its chain starts"
	tap_diag "deepest: $(jq -c '[.bottlenecks[].focus] | last' "$d/live.json")"
	tap_eq "$(jq -c '[.not_tested[] | select(.top_level and .kind == "refused") |
		.hypothesis] | sort' "$d/live.json")" \
		'["ExcessiveAllocationTime","ExcessiveIOBlockingTime","ExcessiveMessageWaitingTime","ExcessiveSyncWaitingTime","FrequentSyncOperations"]' \
		"$name: the hypotheses that need instrumentation are not tested: refused"
	tap_eq "$(jq -r '[.not_tested[] | select(.top_level and .kind == "refused") |
		.detail] | unique | .[]' "$d/live.json")" "$why" "$name: and each says why"
	# CPUstarved, from the kernel, may still be testing at the time limit
	# on a loaded machine (its value near its threshold); nothing else
	tap_eq "$(jq -c '[.not_tested[] | select(.top_level and .kind != "refused") |
		"\(.hypothesis): \(.kind)"] - ["CPUstarved: stopped"]' "$d/live.json")" '[]' \
		"$name: no other top-level hypothesis untested (but CPUstarved stopped by the time limit)"
	tap_eq "$(cat "$d/live.err" "$d/live.txt" | grep -c 'inferior call')" 0 \
		"$name: no inferior call was tried in the program"
	"$HUNCH" replay --batch "$d/j.jsonl" > "$d/replay.txt" 2> "$d/replay.err"
	tap_eq $? 3 "$name: hunch replay --batch exits 3 too"
	tap_ok $(cmp -s "$d/live.txt" "$d/replay.txt"; echo $?) \
		"$name: the replayed text report is byte-identical to the live one"
	diff "$d/live.txt" "$d/replay.txt" | head -10 |
		while read -r l; do tap_diag "$l"; done
}

hunt static "busy-static cannot be instrumented (a static program: no dynamic linker to load the runtime library with): hunch follows it with the kernel's measures only (CPU time, thread states)" \
	sh -c 'exec "$0" "$@"' "$static" --seconds 30
tap_eq "$(head -1 "$TMP/static/live.out")" \
	"bn_onebusy: 30 seconds, 1 busy thread, 2 idle threads" \
	"static: the program runs and prints its first line"
hunt 32-bit "the program exec'ed $spin32, which is not an x86-64 program: hunch follows it with the kernel's measures only (CPU time, thread states)" \
	env "$spin32"
tap_done
