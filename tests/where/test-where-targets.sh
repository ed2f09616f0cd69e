#!/bin/bash
# test-where-targets.sh - `hunch where` over every target variant: the
# functions under the target's own source files are exactly those its
# source defines (tests/targets/<prog>.functions), at every optimisation
# level, PIE and non-PIE, gcc and clang; a stripped copy shows the same
# names from .dynsym alone, under <unknown>.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
SRC=$HUNCH_SOURCE_ROOT/tests/targets

# "srcfile function" pairs under the module's own source files.
where_pairs() {  # where_pairs EXE SOURCES...
	local exe=$1; shift
	local mod; mod=$(basename "$exe")
	"$HUNCH" where "$exe" | awk -F/ -v mod="$mod" -v srcs="$*" '
		BEGIN { n = split(srcs, s, " "); for (i = 1; i <= n; i++) want[s[i]] = 1 }
		$2 == "Code" && $3 == mod && NF >= 5 && ($4 in want) {
			fn = $5; for (i = 6; i <= NF; i++) fn = fn "/" $i
			print $4, fn }' | LC_ALL=C sort
}

# Function names under <unknown> of a stripped copy that the source defines.
stripped_names() {  # stripped_names EXE FUNCTIONS_FILE
	local mod; mod=$(basename "$1")
	"$HUNCH" where "$1" | awk -F/ -v mod="$mod" '
		$2 == "Code" && $3 == mod && $4 == "<unknown>" && NF >= 5 {
			fn = $5; for (i = 6; i <= NF; i++) fn = fn "/" $i; print fn }' |
		LC_ALL=C sort > "$TMP/names"
	cut -d' ' -f2- "$2" | LC_ALL=C sort > "$TMP/want"
	LC_ALL=C comm -12 "$TMP/names" "$TMP/want"
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

nvariants=0
# The functions of FUNCTIONS_FILE that the where axis of SHIPPED (the
# stripped copy of REF, linked without exported symbols) does not list
# under <unknown> as <module>+0x<address in REF> (main: main, found from
# _start); empty when it lists them all.
shipped_names() {  # shipped_names SHIPPED REF FUNCTIONS_FILE
	local mod addr type sym
	mod=$(basename "$1")
	"$HUNCH" where "$1" | sed -n "s|^/Code/$mod/<unknown>/||p" |
		LC_ALL=C sort > "$TMPW/got"
	nm --defined-only "$2" | while read -r addr type sym; do
		grep -qx "[^ ]* $sym" "$3" || continue
		if [ "$sym" = main ]; then echo main
		else printf '%s+%#x\n' "$mod" "0x$addr"; fi
	done | LC_ALL=C sort -u | LC_ALL=C comm -23 - "$TMPW/got"
}
TMPW=$(mktemp -d)
trap 'rm -rf "$TMPW"' EXIT

for fns in "$SRC"/*.functions; do
	prog=$(basename "$fns" .functions)
	want=$(LC_ALL=C sort "$fns")
	srcs=$(cut -d' ' -f1 "$fns" | sort -u | tr '\n' ' ')
	for exe in "$TARGETS_DIR/$prog"-*; do
		case $exe in *.so|*.p|*-stripped|*-shipped) continue ;; esac
		[ -x "$exe" ] && [ -f "$exe" ] || continue
		nvariants=$((nvariants + 1))
		got=$(where_pairs "$exe" $srcs)
		tap_eq "$got" "$want" "where axis of $(basename "$exe") has exactly the functions of $srcs"
		if [ -x "$exe-stripped" ]; then
			got=$(stripped_names "$exe-stripped" "$fns")
			tap_eq "$got" "$(cut -d' ' -f2- "$fns" | LC_ALL=C sort)" \
				"stripped $(basename "$exe") still shows every function (dynsym), under <unknown>"
		fi
		if [ -x "${exe%-g}" ] && [ "${exe%-shipped-g}" != "$exe" ]; then
			got=$(shipped_names "${exe%-g}" "$exe" "$fns")
			tap_eq "$got" "" "$(basename "${exe%-g}") (no symbol left) shows every function of $srcs at its address, as <module>+0x<offset> (main as main)"
		fi
	done
done
tap_ok $([ "$nvariants" -ge 40 ]; echo $?) "checked $nvariants target variants (at least 40)"

# A missing file and a file that is not a program are errors naming it.
out=$("$HUNCH" where /nonexistent/prog 2>&1); rc=$?
tap_eq "$rc" 2 "where on a missing file exits 2"
tap_ok $(grep -q '/nonexistent/prog' <<<"$out"; echo $?) "and names the file: $out"
out=$("$HUNCH" where "$SRC/README.md" 2>&1); rc=$?
tap_eq "$rc" 2 "where on a text file exits 2"
tap_ok $(grep -qi 'not an ELF' <<<"$out"; echo $?) "and says it is not an ELF file: $out"
tap_done
