#!/bin/bash
# test-cost.sh - cost control on a real program whose library calls make
# an experiment expensive: allocstorm calls malloc and free ~7 million
# times a second each.  hunch measures the call rates before launching
# (a counter at each function's entry for 30 ms), so the experiment on
# them is known to cost far more than the limit before it starts: it is
# skipped, never launched and shed.  Every observed-cost sample of the
# search stays under 1.2 x the limit, and no experiment flaps (launched
# and shed again and again: at most PC_MAX_SHEDS = 2 sheds per node, and
# a node is enabled at most 3 times).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
PROG=$1
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
TOP='</Code,/Process,/SyncObject,/Files>'

"$HUNCH" run --batch --time-limit 8 --kill-at-end --report "$TMP/r.json" \
	--journal "$TMP/j.jsonl" -- "$PROG" 30 > "$TMP/out" 2> "$TMP/stderr"
rc=$?
# The search's event log (stderr with -v; always in the journal).
jq -r 'select(.t == "log") | .text' "$TMP/j.jsonl" > "$TMP/err"
# ExcessiveAllocationTime, a top-level hypothesis, cannot be tested
# within the limit: the search is incomplete, and says so (exit 3).
tap_eq "$rc" 3 "hunch run --batch on allocstorm: exit 3 (incomplete)"
tap_eq "$(jq -c '[.result, [.not_tested[] | select(.top_level) |
	[.hypothesis, .kind]]]' "$TMP/r.json")" \
	'["incomplete: 1 hypothesis could not be tested",[["ExcessiveAllocationTime","cost_limit"]]]' \
	"the report: incomplete, ExcessiveAllocationTime not tested for cost"
tap_ok $(jq -e . "$TMP/r.json" > /dev/null; echo $?) "the report is valid JSON"
limit=$(jq -r '.cost.limit' "$TMP/r.json")
tap_eq "$limit" 0.05 "the cost limit is the default 5%"

# Measured before launching.
tap_ok $(grep -qF "Measuring call rates to predict the cost of ExcessiveAllocationTime for $TOP" \
	"$TMP/err"; echo $?) "the search waited for the call rates of malloc and free"
tap_eq "$(jq -c 'select(.t == "predict" and .metric == "alloc_time") | .cost' \
	"$TMP/j.jsonl" | head -1)" "-1" \
	"the first prediction of alloc_time is 'measuring' (journaled, replays the same)"
pred=$(jq -r 'select(.t == "predict" and .metric == "alloc_time" and .cost >= 0) | .cost' \
	"$TMP/j.jsonl" | head -1)
tap_ok $(awk -v p="$pred" -v l="$limit" 'BEGIN { exit !(p > l) }'; echo $?) \
	"then predicted over the limit: $pred"
tap_ok $(grep -qE "Predicted cost [0-9.]+ of ExcessiveAllocationTime for $TOP exceeds the cost limit 0.0500: skipped" \
	"$TMP/err"; echo $?) "ExcessiveAllocationTime is skipped for cost"
tap_eq "$(jq -r '.phases[0].nodes[] | select(.name ==
	"ExcessiveAllocationTime'"$TOP"'") | .state' "$TMP/r.json")" \
	skipped "the report gives its state: skipped (its predicted cost kept)"
tap_eq "$(jq -c 'select(.t == "enable" and .metric == "alloc_time")' \
	"$TMP/j.jsonl" | wc -l)" 0 "alloc_time was never enabled"

# The observed cost, every sample of the search, and the report's peak.
max=$(jq -r 'select(.t == "cost") | .observed' "$TMP/j.jsonl" | sort -g | tail -1)
ncost=$(jq -c 'select(.t == "cost")' "$TMP/j.jsonl" | wc -l)
tap_ok $(awk -v m="$max" -v l="$limit" -v n="$ncost" \
	'BEGIN { exit !(n >= 20 && m <= 1.2 * l) }'; echo $?) \
	"every one of $ncost observed-cost samples is within 1.2 x the limit (max $max)"
peak=$(jq -r '.cost.peak_observed' "$TMP/r.json")
tap_ok $(awk -v m="$peak" -v l="$limit" 'BEGIN { exit !(m <= 1.2 * l) }'; echo $?) \
	"the report's peak observed cost is within 1.2 x the limit ($peak)"

# No flapping: sheds per node, enables per metric and focus.
worst_shed=$(grep -o 'shed [A-Za-z]* for <[^>]*>' "$TMP/err" | sort | uniq -c |
	sort -rn | head -1 | awk '{ print $1 + 0 }')
tap_ok $([ "${worst_shed:-0}" -le 2 ]; echo $?) \
	"no experiment shed more than twice (most: ${worst_shed:-0})"
worst_en=$(jq -c 'select(.t == "enable") | [.metric, .focus]' "$TMP/j.jsonl" |
	sort | uniq -c | sort -rn | head -1 | awk '{ print $1 }')
tap_ok $([ "${worst_en:-0}" -le 3 ]; echo $?) \
	"no metric enabled on one focus more than 3 times (most: ${worst_en:-0})"
tap_eq "$(jq -r '.cost.shed' "$TMP/r.json")" 0 "nothing was shed at all"
tap_done
