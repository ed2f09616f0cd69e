#!/bin/bash
# test-python-where.sh - hunch against perf on Debian's stripped
# /usr/bin/python3.11 running a pure-Python CPU loop.  perf record
# (cpu-clock, 999 Hz) on the same workload names the function with the
# most self samples (_PyEval_EvalFrameDefault on this Python); then
# `hunch run --batch` on it must conclude CPUbound (CPUdemand where other
# load starves it) on the process and on its thread within 3 s of search
# (the kernel's CPU time needs no symbols), and every such bottleneck
# with a /Code constraint must be
# exactly the Python function below perf's: /Code refinement reaches the
# interpreter loop through the sampled call edges (the static graph from
# the stripped executable reaches nothing), and the Python frames joined
# under it (consultant/src_live_hintpy.c) lead to the generator the loop
# runs, `<genexpr>` of the `-c` code (`<string>`); the report's top
# finding (JSON findings[0], the text's first) is CPU in that function.
# CPUbound at main (a `jmp Py_BytesMain`) is true, not 0 CPUs.
# The same behind `sh -c 'exec ...'`.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3.11
# The loop a user tries first: sum() over a generator.  It re-enters the
# interpreter loop through builtin_sum and the generator's next, so sum's
# inclusive CPU is the whole loop; hunch folds that recursion (sum and
# the generator between two activations of the loop hold only their own
# part of the samples) and measures them so, or sum would read the whole
# program and be named where perf's self time names the interpreter loop.
WORK='while True: sum(i*i for i in range(1000))'

perf record -q -e cpu-clock -F 999 -o "$TMP/perf.data" -- \
	timeout 3 "$PY" -c "$WORK" > /dev/null 2> "$TMP/perf.err"
perf report -i "$TMP/perf.data" --stdio --sort sym 2> /dev/null |
	grep -v '^#' | grep '%' > "$TMP/perf.top"
top=$(awk 'NR == 1 { print $3 }' "$TMP/perf.top")
tap_diag "perf's top self functions:"
head -3 "$TMP/perf.top" | tap_lines
tap_ok $([ -n "$top" ] && [ "${top#0x}" = "$top" ]; echo $?) \
	"perf names the function with the most self samples: $top"

"$HUNCH" run --batch --report "$TMP/r.json" --kill-at-end --time-limit 15 \
	--journal "$TMP/j" -- "$PY" -c "$WORK" > "$TMP/out" 2> "$TMP/err"
rc=$?
tap_eq "$rc" 0 "hunch run --batch on python3.11: exit 0"
[ "$rc" = 0 ] || jq -r '.not_tested[] | select(.top_level) |
	"not tested: \(.hypothesis): \(.reason) (\(.detail))"' "$TMP/r.json" |
	tap_lines
# The CPU hypothesis: CPUbound, or on a machine whose other load starves
# the program (CPUstarved true), CPUdemand, the CPU it uses or waits for:
# CPUbound then reads the share of a CPU the load leaves it.
CPU='^CPU(bound|demand)$'
pid=$(jq -r '.target.pid' "$TMP/r.json")
# seconds from the search's start to a node's conclusion (true)
at() { jq -r --arg p "$1" --arg h "$CPU" '.phases[0] as $ph | [$ph.nodes[] |
	select((.hypothesis | test($h)) and .truth == "true" and
	       .focus[0] == "/Code" and (.focus[1] | test($p)))] |
	if length == 0 then "never" else
	(.[0].since_s - $ph.start_s) * 100 | round / 100 end' "$TMP/r.json"; }
t=$(at "^/Process/$pid\$")
tap_ok $([ "$t" != never ] && jq -ne "$t <= 3" > /dev/null; echo $?) \
	"CPU true on /Process/$pid within 3 s of search ($t s)" || {
	# what the search did see: its top-level verdicts and last words
	jq -r '.phases[0].nodes[] | select(.focus[0] == "/Code" and
		.focus[1] == "/Process") | "\(.hypothesis): \(.truth) \(.value)"' \
		"$TMP/r.json" | tap_lines
	tail -8 "$TMP/err" | tap_lines
}
t=$(at "^/Process/$pid/$pid:")
tap_ok $([ "$t" != never ] && jq -ne "$t <= 3" > /dev/null; echo $?) \
	"CPU true on its thread within 3 s of search ($t s)"
# python3.11's main is `jmp Py_BytesMain`: it has no frame while the
# program runs, and a timer enabled then at main found no activation to
# catch up and read 0 (CPUbound false at main, the first finding in
# `_start`).  The frame that returns to main's caller at main's stack
# pointer is main's activation (engine/eng_inst_catchup.c).
tap_eq "$(jq -r '[.phases[0].nodes[] | select(.hypothesis == "CPUbound" and
	.focus[1] == "/Process" and
	(.focus[0] | test("^/Code/python3[.]11/[^/]*/main$"))) | .truth] |
	unique | join(",")' "$TMP/r.json")" true \
	"CPUbound at python3.11's main, which tail-calls Py_BytesMain, is true"
jq -r --arg h "$CPU" '.bottlenecks[] | select((.hypothesis | test($h)) and
	.focus[0] != "/Code") | .focus[0]' "$TMP/r.json" | sort -u > "$TMP/where"
tap_diag "CPU bottlenecks' /Code:"
tap_lines < "$TMP/where"
PYFN='<genexpr>'
tap_ok $([ "$(wc -l < "$TMP/where")" = 1 ] &&
	 grep -qx "/Code/<python>/<string>/$PYFN" "$TMP/where"; echo $?) \
	"the deepest CPU /Code where is the Python function $PYFN below perf's $top, and only it" ||
	grep -E 'true|skipped|shed' "$TMP/err" | head -20 | tap_lines
# This Python's eval loop cannot take a jump at its entry (its computed
# gotos could land anywhere), and a trap costs ~100 µs a call while
# hunch traces the program: far over the cost limit.  Its CPU time is
# then estimated from the stack samples, and the report must say so.
tap_eq "$(jq -r --arg f "$(cat "$TMP/where")" --arg h "$CPU" \
	'[.bottlenecks[] | select((.hypothesis | test($h)) and
	.focus[0] == $f) | .sampled] |
	unique | join(",")' "$TMP/r.json")" true \
	"the report labels that finding as estimated from stack samples"
tap_ok $(grep -q '^    sampled: estimated from CPU stack samples' \
	"$TMP/out"; echo $?) "the text report says so under it"
# What a user reads first: the report's top finding is CPU in perf's
# function.
tap_eq "$(jq -r --arg h "$CPU" '.findings[0] | [(.hypothesis | test($h)),
	(.where.function // "none" | sub("^/Code/[^/]*/[^/]*/"; ""))] |
	map(tostring) | join(" ")' "$TMP/r.json")" "true $PYFN" \
	"the report's top finding is CPU in the Python function $PYFN"
tap_ok $(grep -A1 '^findings, most impact first:' "$TMP/out" |
	 grep -q "^ 1\. .* in \`$PYFN\` (the program given with -c, line [0-9][0-9]*)"; echo $?) \
	"the text report's first finding names $PYFN, in the program given with -c (<string>), and its line"
# Its caller: no Python function is above it on its chain (the search
# went from the interpreter loop to the generator at once), but
# `<module>`, true too, is what the samples show calling it.
tap_eq "$(jq -r '.findings[0].where.caller // "none"' "$TMP/r.json")" \
	"/Code/<python>/<string>/<module>" \
	"the first finding's caller is <module>, from the samples"
tap_ok $(grep -A1 '^findings, most impact first:' "$TMP/out" |
	 grep -q "called from \`<module>\` (the program given with -c)"; echo $?) \
	"the text says so: called from <module> (the program given with -c)"

# Behind a wrapper that execs it once the search is under way (`sh -c
# '...; exec python3.11 ...'`: the shape of pyenv's shims, a chain of
# bash scripts, and of every launcher script): the same top finding.
# The Python stacks are read from the new image (the reader opened at
# the start found no CPython in sh), and the libraries ld.so loaded into
# it are in the where axis (a libpython's eval loop named no function
# before).
E2E_JOURNAL=$TMP/wj "$HUNCH" run --batch --report "$TMP/w.json" \
	--kill-at-end --time-limit 15 --journal "$TMP/wj" -- \
	sh -c "$UNTIL_ENABLED"'; exec "$0" "$@"' "$PY" -c "$WORK" \
	> "$TMP/wout" 2> "$TMP/werr"
tap_eq $? 0 "behind sh -c 'exec python3.11 ...': exit 0"
tap_eq "$(jq -c .target.exec "$TMP/w.json")" \
	'{"count":1,"measures":"instrumented"}' \
	"behind sh: the exec was followed, instrumented"
tap_eq "$(jq -r --arg h "$CPU" '.findings[0] | [(.hypothesis | test($h)),
	(.where.function // "none" | sub("^/Code/[^/]*/[^/]*/"; ""))] |
	map(tostring) | join(" ")' "$TMP/w.json")" "true $PYFN" \
	"behind sh: the report's top finding is CPU in the Python function $PYFN"
# The exec'd image was not stopped at its main: main's return is the
# same place in libc as sh's main's (engine/eng_main.c).
tap_eq "$(jq -r '[.phases[].nodes[] | select(.hypothesis == "CPUbound" and
	.focus[1] == "/Process" and
	(.focus[0] | test("^/Code/python3[.]11/[^/]*/main$"))) | .truth] |
	unique | join(",")' "$TMP/w.json")" true \
	"behind sh: CPUbound at python3.11's main is true"
# (sh links no libm: python3.11's libraries are the new image's)
tap_eq "$(jq -r 'select(.t == "resource" and .op == "add" and
	.kind == "function") | .module' "$TMP/wj" | sort -u |
	grep -cx -e libm.so.6 -e libz.so.1 -e libexpat.so.1)" 3 \
	"behind sh: the new image's libraries (libm, libz, libexpat) are in the where axis"
tap_done
