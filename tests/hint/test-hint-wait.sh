#!/bin/bash
# test-hint-wait.sh - the where of a wait in a stripped program:
# tests/targets/bn_fsync built -O2 without exported symbols and stripped
# with `strip --strip-all` (bn_fsync-shipped) writes 64 KiB and fsyncs,
# again and again, into a file on the build's disk (fsync returns at
# once on tmpfs).  The hint sampler sees the thread blocked in fsync
# (/proc/TID/syscall) and unwinds its stack there without stopping it,
# so /Code refinement of the I/O finding reaches libc's fsync: the
# report has an ExcessiveIOBlockingTime bottleneck at fsync and the file
# and none at write (which copies into the page cache),
# and the journal records hints > 0 for fsync from I/O observations
# (the program is blocked, not running: no CPU sample sees fsync).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d -p "$HUNCH_BUILD_ROOT")
trap 'rm -rf "$TMP"' EXIT
PROG=$TARGETS_DIR/bn_fsync-O2-pie-shipped

tap_ok $(readelf -S "$PROG" | grep -qE '\.symtab|\.debug_'; [ $? = 1 ]; echo $?) \
	"bn_fsync-shipped has no .symtab and no DWARF"
tap_eq "$(readelf --dyn-syms -W "$PROG" | grep -c ' bnfs_')" 0 \
	"bn_fsync-shipped exports none of its functions"

TMPDIR=$TMP "$HUNCH" run --batch --report "$TMP/r.json" --kill-at-end \
	--time-limit 15 --journal "$TMP/j" -- "$PROG" --seconds 60 \
	> "$TMP/out" 2> "$TMP/err"
tap_eq "$?" 0 "hunch run --batch on bn_fsync-shipped: exit 0"
fsync=$(jq -r 'select(.t == "callees") | .callees[]?' "$TMP/j" |
	grep -m1 '^/Code/libc\.so\.6/[^/]*/fsync$')
tap_ok $([ -n "$fsync" ]; echo $?) \
	"a callees answer names libc's fsync: $fsync"
tap_ok $(jq -se --arg p "$fsync" 'any(.[]; .t == "hint" and
	.path == $p and .share > 0.5)' "$TMP/j" > /dev/null; echo $?) \
	"fsync's hint is over 0.5 (blocked-in-I/O observations on its stack)"
jq -c '.bottlenecks[] | select(.hypothesis == "ExcessiveIOBlockingTime")
	| [.focus[0], .focus[3]]' "$TMP/r.json" > "$TMP/io"
tap_diag "ExcessiveIOBlockingTime bottlenecks (/Code, /Files):"
tap_lines < "$TMP/io"
tap_ok $(jq -se --arg c "$fsync" 'any(.[]; .[0] == $c and
	(.[1] | test("^/Files/.*/bn_fsync-[^/]+$")))' "$TMP/io" \
	> /dev/null; echo $?) \
	"an I/O bottleneck names fsync and the file"
# write() copies 64 KiB into the page cache: it does not block (io_wait
# at /Code/.../write measures ~0.015, under the 0.2 threshold)
tap_eq "$(jq -s '[.[] | select(.[0] | test("/write$"))] | length' \
	"$TMP/io")" 0 "no I/O bottleneck at libc's write"
tap_done
