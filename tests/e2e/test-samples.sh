#!/bin/bash
# test-samples.sh - a short program gets an answer from the stack
# samples (consultant/src_live_samples.c, pc_report_samples.c): Debian's
# /usr/bin/sort on 1,500,000 shuffled lines (~0.4 s alone) ends before
# the search can test its hypotheses; the report must say the search was
# incomplete (never "no bottleneck found") and its "stack samples"
# section, marked sampled and not concluded, must name perf's hottest
# function (self samples) as its top self function.  LC_ALL=C: sort
# compares lines with memcmp (libc), perf's top by far (~55%); in a
# UTF-8 locale strcoll's strcmp and memcmp split the time within a few
# percent and the two samplers' orders would be a coin toss.  When
# perf's top two are within 5 points of each other (not expected here),
# hunch's top is accepted among them: ~60 samples at 99 Hz put a few
# points of noise on a share.  The replay of the journal prints the
# same report, its section read from the journal's stack_samples record.
# perf's user-space symbols ([.]) are compared: hunch's sampler unwinds
# from the user registers, so a sample taken in the kernel (a page
# fault) counts for the user function that entered it, where perf names
# the kernel function.  MALLOC_PERTURB_ (set by meson test) is unset: it
# makes malloc memset every block, and sort would spend half its time
# faulting pages in memset, which no user sees.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export LC_ALL=C
unset MALLOC_PERTURB_
SORT=/usr/bin/sort

seq 1 1500000 | shuf --random-source=<(yes) > "$TMP/data.txt"

perf record -q -e cpu-clock -F 999 -o "$TMP/perf.data" -- \
	"$SORT" -o "$TMP/perf.out" "$TMP/data.txt" > /dev/null 2> "$TMP/perf.err"
perf report -q -i "$TMP/perf.data" --stdio --no-children --sort symbol \
	2> /dev/null | grep '%  \[\.\] ' > "$TMP/perf.top"
tap_diag "perf's top self functions:"
head -3 "$TMP/perf.top" | tap_lines
p1=$(awk 'NR == 1 { print $3 }' "$TMP/perf.top")
p2=$(awk 'NR == 2 { print $3 }' "$TMP/perf.top")
close=$(awk 'NR == 1 { a = $1 + 0 } NR == 2 { b = $1 + 0 }
	END { print (a - b <= 5) ? 1 : 0 }' "$TMP/perf.top")
tap_ok $([[ -n "$p1" ]]; echo $?) "perf names a hottest function: $p1"

"$HUNCH" run --batch --journal "$TMP/j.jsonl" --report "$TMP/r.json" -- \
	"$SORT" -o "$TMP/out.txt" "$TMP/data.txt" > "$TMP/live" 2> "$TMP/err"
tap_eq "$?" 3 "hunch run --batch on sort: exit 3 (incomplete)"
tap_ok $(cmp -s "$TMP/out.txt" "$TMP/perf.out"; echo $?) "sort's output as without hunch"
tap_diag "hunch's stack samples section:"
sed -n '/^stack samples/,/^$/p' "$TMP/live" | tap_lines
tap_ok $(jq -e '.result | startswith("incomplete: ")' "$TMP/r.json" \
	 > /dev/null; echo $?) "the JSON result says incomplete: $(jq -r .result "$TMP/r.json")"
tap_ok $(grep -q '^ *incomplete: [0-9]* hypothes[ie]s* could not be tested' \
	 "$TMP/live" && ! grep -q 'no bottleneck found' "$TMP/live"
	 echo $?) "the text says incomplete, never no bottleneck found"

top=$(jq -r '.samples.self[0].function' "$TMP/r.json")
if [[ $close == 1 ]]; then
	tap_ok $([[ $top == "$p1" || $top == "$p2" ]]; echo $?) \
		"hunch's top self function $top is among perf's top two ($p1, $p2: within 5 points)"
else
	tap_eq "$top" "$p1" "hunch's top self function is perf's hottest"
fi
tap_eq "$(jq -r '.samples.self[0].module' "$TMP/r.json")" libc.so.6 \
	"named with its module as the where axis names it"
count=$(jq -r '.samples.count' "$TMP/r.json")
tap_ok $([[ $count -ge 20 ]]; echo $?) "at least 20 CPU samples counted: $count"
tap_eq "$(jq -r '[.samples.self[].samples] | (add <= '"$count"') and
	(.[0] >= .[1])' "$TMP/r.json")" true \
	"self samples listed most first, at most the count"
pct=$(jq -r '.samples.self[0] | .percent | round' "$TMP/r.json")
tap_eq "$(grep -c "^stack samples (sampled, not concluded by the search): $count over [0-9.]* s, [0-9.]* CPU: $pct% in \`$top\` (libc.so.6), called from \`" "$TMP/live")" 1 \
	"the text's section is marked sampled and names $top"

"$HUNCH" replay --batch "$TMP/j.jsonl" > "$TMP/replay" 2> "$TMP/rerr"
tap_eq "$?" 3 "hunch replay --batch: exit 3 (incomplete)"
tap_ok $(diff "$TMP/live" "$TMP/replay" > "$TMP/diff"; echo $?) \
	"the replay prints the same report"
tap_lines < "$TMP/diff"
tap_eq "$(grep -c '"t":"stack_samples"' "$TMP/j.jsonl")" 1 \
	"the journal holds one stack_samples record"
tap_done
