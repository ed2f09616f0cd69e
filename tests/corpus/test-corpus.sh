#!/bin/bash
# test-corpus.sh - real Debian programs doing real work under hunch:
# python3.11 (a script with threads), sqlite3 (a scripted workload),
# lua5.4, zstd (multi-threaded) and gzip compressing and decompressing a
# file.  Each runs directly and under `hunch run` (runtime library loaded,
# stopped at main, resumed): stdout byte-identical, same status, same
# stderr apart from hunch's own lines.  Then hunch attaches to a running
# python3.11 with three busy threads, lists its where axis and detaches;
# the interpreter finishes as if nothing happened.  gzip and zstd also
# run behind wrappers that exec them (`sh -c 'exec …'`, `env`).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
. "$HUNCH_SOURCE_ROOT/tests/targets/cases.sh"
HERE=$HUNCH_SOURCE_ROOT/tests/corpus
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT

PY=/usr/bin/python3.11
seq -f 'line %g of the corpus input, with some words to compress' 1 200000 >"$TMP/input"

both() {  # both NAME STDIN COMMAND...: run directly and under hunch, compare
	local name=$1 in=$2 st1 st2
	shift 2
	(cd "$TMP" && "$@" <"$in" >"$TMP/d.out" 2>"$TMP/d.err"); st1=$?
	(cd "$TMP" && "$HUNCH" run -- "$@" <"$in" >"$TMP/h.out" 2>"$TMP/h.err"); st2=$?
	grep -v '^hunch: ' "$TMP/h.err" >"$TMP/h.err2"
	tap_ok $(cmp -s "$TMP/d.out" "$TMP/h.out"; echo $?) \
		"$name: stdout byte-identical under hunch ($(wc -c <"$TMP/d.out") bytes)"
	tap_eq "$st2" "$st1" "$name: same exit status under hunch"
	tap_ok $(cmp -s "$TMP/d.err" "$TMP/h.err2"; echo $?) "$name: same stderr"
}

both "python3.11 work.py" /dev/null "$PY" -I "$HERE/work.py"
both "sqlite3 work.sql" "$HERE/work.sql" /usr/bin/sqlite3 :memory:
both "lua5.4 work.lua" /dev/null /usr/bin/lua5.4 "$HERE/work.lua"
both "zstd -T2 compress" "$TMP/input" /usr/bin/zstd -q -c -T2 -5
zstd -q -c -5 <"$TMP/input" >"$TMP/input.zst"
both "zstd decompress" "$TMP/input.zst" /usr/bin/zstd -q -d -c
both "gzip -9 compress" "$TMP/input" /usr/bin/gzip -c -9
gzip -c <"$TMP/input" >"$TMP/input.gz"
both "gzip decompress" "$TMP/input.gz" /usr/bin/gzip -d -c

# Through wrappers that exec the program: hunch follows the exec and
# loads its runtime library into the new image at its entry point.
both "sh -c 'exec gzip -9'" "$TMP/input" sh -c 'exec /usr/bin/gzip -c -9'
(cd "$TMP" && /usr/bin/zstd -q -c -T2 -5 <"$TMP/input" >"$TMP/d.out")
(cd "$TMP" && "$HUNCH" run --batch --no-journal --report "$TMP/w.json" -- \
	env /usr/bin/zstd -q -c -T2 -5 <"$TMP/input" >"$TMP/h.out" 2>"$TMP/h.err")
n=$(wc -c <"$TMP/d.out")
tap_ok $(cmp -s -n "$n" "$TMP/d.out" "$TMP/h.out"; echo $?) \
	"env zstd -T2 under hunch run --batch: the output byte-identical ($n bytes)"
tap_eq "$(tail -c +$((n + 1)) "$TMP/h.out" | head -1 | cut -c1-14)" \
	"hunch report: " "and the report right after it"
tap_eq "$(jq -c .target.exec "$TMP/w.json")" \
	'{"count":1,"measures":"instrumented"}' \
	"env zstd: the exec was followed, zstd instrumented"
tap_eq "$(jq -r .end.target "$TMP/w.json")" "target exited with status 0" \
	"env zstd: zstd exited with status 0"

# The where axis of a stripped real binary comes from .dynsym.
n=$("$HUNCH" where "$PY" | grep -c '^/Code/python3.11/<unknown>/')
tap_ok $([ "$n" -ge 1400 ]; echo $?) "where axis of stripped python3.11 has its $n exported functions"

# Attach to a running interpreter with busy threads, then detach.
"$PY" -I "$HERE/work_wait.py" "$TMP/go" >"$TMP/w.out" 2>"$TMP/w.err" &
pypid=$!
tgt_wait_line "$TMP/w.err" ready
"$HUNCH" where --pid "$pypid" >"$TMP/where" 2>"$TMP/where.err"
tap_eq "$?" 0 "hunch where --pid on a running python3.11"
tap_eq "$(grep -c "^/Process/$pypid/[0-9]" "$TMP/where")" "$(ls /proc/$pypid/task | wc -l)" \
	"every interpreter thread is listed"
"$HUNCH" attach --seconds 0.3 "$pypid" 2>"$TMP/attach.err"
tap_eq "$?" 0 "hunch attach (with the runtime library) and detach"
tap_ok $(grep -q libhunchrt.so "/proc/$pypid/maps"; echo $?) "the runtime library is in the interpreter"
tap_eq "$(awk '/^TracerPid:/ {print $2}' /proc/$pypid/status)" 0 "the interpreter is no longer traced"
touch "$TMP/go"
wait "$pypid"
tap_eq "$?" 0 "the interpreter finishes with status 0"
tap_eq "$(cat "$TMP/w.out")" "threads ran: [True, True, True]" "and its usual output"
tap_done
