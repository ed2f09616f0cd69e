#!/bin/bash
# bench-consultant.sh [SECONDS] [TARGET...] - the live search on each
# bottleneck target (tests/targets/bn_*.c, O2 PIE), SECONDS long (30):
#   - concluded: search time (s) at which the planted bottleneck's last
#     where/thread component (tests/targets/<t>.truth) was first true;
#     bn_phases' second-half finding is timed from its current phase's
#     start (--phase-at);
#   - the target's own throughput (its stderr line) under `hunch run
#     --batch` and, at the same time, of a second copy run directly: both
#     see the same machine load (on a shared machine, runs one after the
#     other differed by up to 70%); the slowdown is 1 - hunch / direct.
#     Over the whole run: the search stops when it has nothing left to
#     test and the program runs on uninstrumented ("searched": how long
#     the search ran);
#   - peak observed cost, experiments run and experiments shed for
#     cost (the JSON report);
#   - not planted: reported bottlenecks (true at the end, or true for
#     a while: "earlier") that no planted finding explains and no `may`
#     line allows (tests/e2e/truth.jq's "extra"), listed under the table;
#   - the machine's 1-minute load average when the target started.
# TARGET "demo" is hunch's bundled demo with bench/consultant/demo.truth:
# its three problems are timed one by one ("a / b / c" in truth order).
# Prints a markdown table; BENCH_KEEP=DIR keeps each target's report,
# hunch's stderr and journal there (TARGET.json, TARGET.err, TARGET.jsonl).  Needs HUNCH, HUNCHRT, TARGETS_DIR,
# HUNCH_SOURCE_ROOT (meson benchmark 'consultant' sets them).
set -u
S=${1:-30}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(bn_cpu_deep bn_mutex bn_condvar
	bn_smallwrites bn_fsync bn_onebusy bn_phases bn_sleepy bn_tailchain
	bn_qsort bn_callback bn_pipeline demo)
. "$HUNCH_SOURCE_ROOT/tests/e2e/truth.sh"
TMP=$(mktemp -d -p "${HUNCH_BUILD_ROOT:-.}" bench-consultant.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP    # fsync must reach a disk: not /tmp's tmpfs

# The throughput numbers of a target's stderr line (two for bn_phases).
throughput() {
	sed -n 's/^bn_[a-z_]*: throughput //p' "$1" | grep -oE '[0-9]+' |
		tr '\n' ' '
}

# concluded REPORT PHASE-INDEX FINDINGS: seconds, or "-" if never.
# The phase's true nodes and its earlier findings (true for a while,
# false at the end: bn_phases' CPU half in the global phase, which turns
# false once the program moves on to its I/O half).  Earlier findings
# are only the most refined nodes, so a component named by a less
# refined node that turned false too is timed late, never early.
concluded() {
	local t
	t=$(jq -L "$HUNCH_SOURCE_ROOT/tests/e2e" --argjson findings "$3" \
		-f "$HUNCH_SOURCE_ROOT/bench/consultant/concluded.jq" \
		<(jq ".phases[$2] // {} | ((.nodes // []) | map(select(.truth ==
		\"true\"))) + (.earlier // [])" "$1") 2> /dev/null)
	if [ -z "$t" ] || [ "$t" = null ]; then
		echo "-"
	elif [ "$2" -gt 0 ]; then
		jq -r --argjson t "$t" ".phases[$2].start_s | \$t - . |
			. * 10 | round / 10" "$1"
	else
		jq -n -r --argjson t "$t" '$t * 10 | round / 10'
	fi
}

# found REPORT FINDINGS: seconds, or "-": when one of the report's findings
# first held the planted one (found.jq: CPUbound and CPUdemand one finding,
# its thread implied by its function), for a global-phase finding that
# the true nodes never named whole (the demo's hot loop on a loaded
# machine: CPUdemand refines /Code, not main's thread).
found() {
	local t
	t=$(jq -L "$HUNCH_SOURCE_ROOT/tests/e2e" --argjson findings "$2" \
		-f "$HUNCH_SOURCE_ROOT/bench/consultant/found.jq" "$1" 2> /dev/null)
	if [ -z "$t" ] || [ "$t" = null ]; then
		echo "-"
	else
		jq -n -r --argjson t "$t" '$t * 10 | round / 10'
	fi
}

# when REPORT FINDINGS: the earlier of concluded (phase 0) and found.
when0() {
	local a b
	a=$(concluded "$1" 0 "$2")
	b=$(found "$1" "$2")
	if [ "$a" = - ]; then
		echo "$b"
	elif [ "$b" = - ]; then
		echo "$a"
	else
		awk -v a="$a" -v b="$b" 'BEGIN { print (b < a ? b : a) }'
	fi
}

# extra REPORT PHASE-INDEX EXPLAIN: the phase's false findings, one name a
# line (its bottlenecks and its earlier findings).
extra() {
	jq -r --argjson findings '[]' --argjson may "$MAY" \
		--argjson explain "$3" --argjson ancestors "$ANCESTORS" \
		-L "$HUNCH_SOURCE_ROOT/tests/e2e" \
		-f "$HUNCH_SOURCE_ROOT/tests/e2e/truth.jq" \
		<(jq ".phases[$2] // {} | (.bottlenecks // []) + (.earlier // [])" \
		"$1") | sed -n 's/^extra\t//p'
}

ratio() {  # ratio HUNCH DIRECT: slowdown in percent
	awk -v h="$1" -v d="$2" 'BEGIN {
		if (d > 0) printf "%.1f%%", 100 * (1 - h / d); else print "-" }'
}

echo "| target | load | concluded (s) | not planted | searched (s) | throughput direct | with hunch | slowdown | peak cost | experiments | shed |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
: > "$TMP/extras"
for t in "${TARGETS[@]}"; do
	prog=$TARGETS_DIR/$t-O2-pie
	truth=$HUNCH_SOURCE_ROOT/tests/targets/$t.truth
	if [ "$t" = demo ]; then
		prog=$TARGETS_DIR/hunch-demo
		truth=$HUNCH_SOURCE_ROOT/bench/consultant/demo.truth
	fi
	truth_load "$truth" "${prog##*/}" "$S"
	load=$(cut -d' ' -f1 /proc/loadavg)
	"$prog" "${ARGS[@]}" > /dev/null 2> "$TMP/d.err" &
	PHASE_AT=()
	[ "${FINDINGS[2]}" != '[]' ] && PHASE_AT=(--phase-at $((S / 2 + 1)))
	rm -f "$TMP/r.json"
	SETS=()   # BENCH_SET="NAME=VALUE ...": tunables, to compare settings
	for kv in ${BENCH_SET:-}; do SETS+=(--set "$kv"); done
	JNL=(--no-journal)   # BENCH_KEEP keeps the journal too (enables, samples)
	[ -n "${BENCH_KEEP:-}" ] && JNL=(--journal "$TMP/j.jsonl")
	"$HUNCH" run --batch ${BENCH_KEEP:+-v} "${JNL[@]}" --time-limit $((S - 1)) \
		"${PHASE_AT[@]}" "${SETS[@]}" --report "$TMP/r.json" -- "$prog" \
		"${ARGS[@]}" > /dev/null 2> "$TMP/h.err"
	[ -s "$TMP/r.json" ] || grep -m3 '^hunch: [a-z]' "$TMP/h.err" >&2
	wait
	if [ -n "${BENCH_KEEP:-}" ]; then   # the report and stderr, to read
		mkdir -p "$BENCH_KEEP"
		cp "$TMP/r.json" "$BENCH_KEEP/$t.json" 2> /dev/null
		cp "$TMP/h.err" "$BENCH_KEEP/$t.err"
		mv "$TMP/j.jsonl" "$BENCH_KEEP/$t.jsonl" 2> /dev/null
	fi
	truth_processes "$TMP/h.err"   # "process NAME": the pid it printed
	read -ra d <<< "$(throughput "$TMP/d.err")"
	read -ra h <<< "$(throughput "$TMP/h.err")"
	if [ "$NONE" = 1 ]; then
		when="none planted; $(jq -r '.bottlenecks | length' \
			"$TMP/r.json") found"
		extra "$TMP/r.json" 0 '[]' > "$TMP/x"
	elif [ "${FINDINGS[0]}" != '[]' ]; then
		when=
		for i in $(seq 0 $(($(jq length <<< "${FINDINGS[0]}") - 1))); do
			when+="${when:+ / }$(when0 "$TMP/r.json" \
				"$(jq -c ".[$i:$i + 1]" <<< "${FINDINGS[0]}")")"
		done
		extra "$TMP/r.json" 0 "${FINDINGS[0]}" > "$TMP/x"
	else
		when="$(concluded "$TMP/r.json" 0 "${FINDINGS[1]}") / $(concluded \
			"$TMP/r.json" 1 "${FINDINGS[2]}")"
		{ extra "$TMP/r.json" 0 "$(jq -c -n --argjson a "${FINDINGS[1]}" \
			--argjson b "${FINDINGS[2]}" '$a + $b')"
		  extra "$TMP/r.json" 1 "${FINDINGS[2]}"; } > "$TMP/x"
	fi
	sed "s/^/$t: /" "$TMP/x" >> "$TMP/extras"
	thr_d= thr_h= slow=
	for i in "${!d[@]}"; do
		thr_d+="${thr_d:+ / }${d[i]}"
		thr_h+="${thr_h:+ / }${h[i]:--}"
		slow+="${slow:+ / }$(ratio "${h[i]:-0}" "${d[i]}")"
	done
	echo "| $t | $load | $when | $(wc -l < "$TMP/x") | $(jq -r \
		'.duration_s * 10 | round / 10' \
		"$TMP/r.json") | $thr_d | $thr_h | $slow |" \
		"$(jq -r '.cost.peak_observed * 1000 | round / 10 | tostring + "%"' \
		"$TMP/r.json") | $(jq -r .cost.experiments_run "$TMP/r.json") |" \
		"$(jq -r .cost.shed "$TMP/r.json") |"
done
if [ -s "$TMP/extras" ]; then
	echo
	echo "Not planted:"
	sed 's/^/- /' "$TMP/extras"
fi
