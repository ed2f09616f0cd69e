#!/bin/bash
# test-direct.sh - every target variant, run directly, matches its ground
# truth: stdout byte for byte, exit status or killing signal, ELF kind,
# and the exact set of functions in its symbol tables.  If this fails,
# the tests that launch or read the targets through hunch cannot be
# trusted either.  Needs TARGETS_DIR and HUNCH_SOURCE_ROOT (meson's
# test_env).
set -u
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
. "$HUNCH_SOURCE_ROOT/tests/targets/cases.sh"

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

# check_run CASE BINARY LABEL: one TAP line for output and status.
check_run() {
	local drv=0
	tgt_run_case "$1" "$2" "$OUT" 2>/dev/null || drv=1
	if [ $drv -eq 0 ] && cmp -s "$OUT" "$TGT_OUT" &&
		[ "$TGT_GOT_STATUS" = "$TGT_STATUS" ]; then
		tap_ok 0 "$1 $3: stdout and $TGT_STATUS"
		return
	fi
	tap_ok 1 "$1 $3: stdout and $TGT_STATUS"
	tap_diag "status: got '$TGT_GOT_STATUS', want '$TGT_STATUS'; driver ok: $((1 - drv))"
	diff "$TGT_OUT" "$OUT" | head -20 | sed 's/^/# /'
}

# Defined function symbols, demangled, minus the toolchain's own.
# $2 = --dyn-syms for .dynsym only; otherwise every symbol table.
functions_of() {
	readelf -W "${2:---syms}" "$1" |
		awk '$4 == "FUNC" && $7 != "UND" { sub(/@.*/, "", $8); print $8 }' |
		c++filt | sort -u |
		comm -23 - "$TGT_SRC/toolchain.functions"
}

# check_symbols TRUTHFILE BINARY LABEL
check_symbols() {
	local want got stripped=
	want=$(cut -d' ' -f2- "$1")
	case $2 in *-stripped) stripped=--dyn-syms;; esac
	got=$(functions_of "$2" $stripped)
	tap_eq "$got" "$want" "$3: functions ${stripped:+(dynamic only) }match $(basename "$1")"
}

# Every function's DWARF source file (from the line table at its entry),
# as "<basename> <name>" lines like a .functions file.
sources_of() {
	local addrs
	addrs=$(readelf -sW "$1" | awk '$4 == "FUNC" && $7 != "UND" { print $2 }' | sort -u)
	# shellcheck disable=SC2086  # one address per word
	addr2line -f -C -e "$1" $addrs | paste - - |
		awk -F '\t' '{ f = $2; sub(/:[^:]*$/, "", f); sub(/.*\//, "", f); print f " " $1 }' |
		grep -vFwf "$TGT_SRC/toolchain.functions" | sort -u
}

# check_sources TRUTHFILE BINARY LABEL (binaries with DWARF only)
check_sources() {
	tap_eq "$(sources_of "$2")" "$(cat "$1")" "$3: DWARF source files match $(basename "$1")"
}

# check_elf BINARY LABEL: PIE or not, stripped or not, as named.
check_elf() {
	local type want_type=EXEC syms=yes want_syms=yes
	type=$(readelf -h "$1" | awk '/Type:/ { print $2 }')
	case $1 in *-pie*) want_type=DYN;; esac
	readelf -SW "$1" | grep -q ' \.symtab ' || syms=no
	case $1 in *-stripped) want_syms=no;; esac
	tap_eq "$type symtab=$syms" "$want_type symtab=$want_syms" "$2: ELF type and symtab"
}

for prog in "${TGT_PROGS[@]}"; do
	for v in $(tgt_variants "$prog"); do
		bin=$TARGETS_DIR/$prog-$v
		if [ ! -x "$bin" ]; then
			tap_ok 1 "$prog-$v: built"
			continue
		fi
		check_elf "$bin" "$prog-$v"
		check_symbols "$TGT_SRC/$prog.functions" "$bin" "$prog-$v"
		case $v in *-stripped) ;;
		*) check_sources "$TGT_SRC/$prog.functions" "$bin" "$prog-$v";; esac
	done
done
check_symbols "$TGT_SRC/plugin.functions" "$TARGETS_DIR/libtgtplugin.so" libtgtplugin.so
check_sources "$TGT_SRC/plugin.functions" "$TARGETS_DIR/libtgtplugin.so" libtgtplugin.so

for name in "${TGT_CASES[@]}"; do
	tgt_case "$name"
	for v in $(tgt_variants "$TGT_PROG"); do
		check_run "$name" "$TARGETS_DIR/$TGT_PROG-$v" "$v"
	done
done
check_run demo "$TARGETS_DIR/hunch-demo" "hunch-demo (installed build)"

tap_done
