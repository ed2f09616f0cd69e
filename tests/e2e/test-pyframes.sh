#!/bin/bash
# test-pyframes.sh - Python-level frames on Debian's stripped python3.11
# (engine/eng_pyframes*, consultant/src_live_hintpy.c): perf record on
# pyhot.py (top -> middle -> hot, the CPU in hot) names the interpreter
# loop, _PyEval_EvalFrameDefault, as every Python program's; hunch's lead
# finding must name the Python function, `hot` in pyhot.py, estimated
# from stack samples, in the text report and in the JSON one (CPUbound,
# or CPUdemand where other load starves python: "want 0.97 CPUs ...,
# in `hot` (pyhot.py); using 0.60 CPUs (estimated from stack samples)").
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

"$HUNCH" run --batch --report "$TMP/r.json" --kill-at-end --time-limit 15 \
	--no-journal -- "$PY" "$SCRIPT" > "$TMP/out" 2> "$TMP/err"
tap_eq "$?" 0 "hunch run --batch on python3.11 pyhot.py: exit 0"
tap_diag "hunch's findings:"
sed -n '/^findings, most impact first:/,/^$/p' "$TMP/out" | tap_lines
tap_eq "$(jq -r '.findings[0] | [(.hypothesis | test("^CPU(bound|demand)$")),
	.where.function] | map(tostring) | join(" ")' "$TMP/r.json")" \
	"true /Code/<python>/pyhot.py/hot" \
	"the JSON report's lead finding is CPU in the Python function hot"
tap_eq "$(jq -r '.findings[0].sampled' "$TMP/r.json")" true \
	"estimated from stack samples"
tap_ok $(grep -A1 '^findings, most impact first:' "$TMP/out" |
	 grep -q '^ 1\. .* in `hot` (pyhot\.py)[;)( ].*(estimated from stack samples)$'; echo $?) \
	"the text report's first finding names hot in pyhot.py"
tap_done
