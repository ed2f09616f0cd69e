#!/bin/bash
# test-shipped-gzip.sh - Debian's /usr/bin/gzip (stripped: no symbol of
# its own, not even in .dynsym) compressing a large file with -9, hunted
# by `hunch run --batch` as a user would run it: CPUbound must be
# concluded on the process, on its one thread and inside the gzip module
# (/Code/gzip/...), and the report must be complete.  perf records the
# same workload in the same test: the function hunch names deepest is
# printed beside perf's hottest address, and every function hunch names
# in gzip must be one `hunch where` lists for the file (FDE functions,
# named <module>+0x<offset>).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
GZIP_BIN=/usr/bin/gzip

# About 85 MB of words drawn from a small vocabulary: gzip -9 searches
# long match chains on it, ~10 s of CPU here, longer than the search.
awk 'BEGIN { srand(7); n = split("the of and a to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part", w, " ");
	for (i = 0; i < 20000000; i++)
		printf "%s%s", w[int(rand() * n) + 1], (i % 12 == 11) ? "\n" : " " }' \
	> "$TMP/words.txt"

# ---- perf, the baseline ------------------------------------------------------
# Four seconds of it (timeout ends gzip, so perf's status is not 0).
perf record -q -e cpu-clock -F 499 -o "$TMP/perf.data" -- \
	timeout 4 "$GZIP_BIN" -9 -c "$TMP/words.txt" > /dev/null 2>&1
top=$(perf report -i "$TMP/perf.data" --stdio --sort dso,sym 2>/dev/null |
	awk '$2 == "gzip" && $3 == "[.]" { print $4; exit }')
tap_ok $([ -n "$top" ]; echo $?) "perf names gzip's hottest address ($top)"

# ---- hunch ------------------------------------------------------------------------
"$HUNCH" run --batch --time-limit 12 --kill-at-end --no-journal \
	--report "$TMP/r.json" -- "$GZIP_BIN" -9 -c "$TMP/words.txt" \
	> "$TMP/out" 2> "$TMP/err"
tap_eq $? 0 "gzip -9: hunch run --batch exits 0"
grep -E 'finding:|Could not|incomplete' "$TMP/err" | head -30 |
	while read -r l; do tap_diag "$l"; done
pid=$(jq -r .target.pid "$TMP/r.json")
cpu() {  # cpu JQ-CONDITION-ON-FOCUS: CPUbound bottlenecks matching it
	jq -r --arg pid "$pid" "[.bottlenecks[] | select(.hypothesis ==
		\"CPUbound\") | select(.focus as \$f | $1)] | length" "$TMP/r.json"
}
tap_ok $([ "$(cpu '$f[1] | startswith("/Process/" + $pid)')" -ge 1 ]
	 echo $?) "gzip -9: CPUbound on the process /Process/$pid"
tap_ok $([ "$(cpu '$f[1] | test("^/Process/" + $pid + "/[0-9]+:")')" -ge 1 ]
	 echo $?) "gzip -9: CPUbound on its thread"
tap_ok $([ "$(cpu '$f[0] | startswith("/Code/gzip/")')" -ge 1 ]
	 echo $?) "gzip -9: CPUbound inside the /Code/gzip module"
tap_eq "$(jq -r .result "$TMP/r.json")" "bottleneck: $(jq -r '.findings[0].text' "$TMP/r.json")" \
	"gzip -9: the report's result is its lead finding"

# Every gzip function the report names is one of the file's functions.
"$HUNCH" where "$GZIP_BIN" > "$TMP/where"
jq -r '.bottlenecks[].focus[0] | select(startswith("/Code/gzip/"))' \
	"$TMP/r.json" | sort -u > "$TMP/named"
bad=0
while read -r f; do
	grep -qxF "$f" "$TMP/where" || { bad=1; tap_diag "not in hunch where: $f"; }
done < "$TMP/named"
tap_eq "$bad" 0 "gzip -9: every gzip function reported is a function of the file ($(wc -l < "$TMP/named"))"
deep=$(awk -F/ '{ print NF, $0 }' "$TMP/named" | sort -n | tail -1 | cut -d' ' -f2-)
tap_diag "hunch: deepest CPU where in gzip: ${deep:-none}; perf: ${top:-none}"
tap_done
