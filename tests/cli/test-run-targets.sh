#!/bin/bash
# test-run-targets.sh - every documented case of every target, run under
# `hunch run` (runtime library loaded, stopped at main, resumed), gives
# byte-identical stdout and the same exit status or killing signal as when
# run directly (tests/targets/cases.sh holds the cases and ground truth).
# Signals sent to the program while it runs under hunch reach it as usual.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
. "$HUNCH_SOURCE_ROOT/tests/targets/cases.sh"
TGT_LAUNCHER=("$HUNCH" run --)

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

# Every case on the -O2 PIE build; every variant for the quick cases.
run_one() {  # run_one CASE VARIANT
	local bin=$TARGETS_DIR/$TGT_PROG-$2
	tgt_case "$1"
	bin=$TARGETS_DIR/$TGT_PROG-$2
	tgt_run_case "$1" "$bin" "$OUT"
	local drv=$?
	if cmp -s "$OUT" "$TGT_OUT" && [ "$TGT_GOT_STATUS" = "$TGT_STATUS" ] &&
		[ $drv -eq 0 ]; then
		tap_ok 0 "hunch run $1 on $TGT_PROG-$2: same output, $TGT_STATUS"
	else
		tap_ok 1 "hunch run $1 on $TGT_PROG-$2: same output, $TGT_STATUS"
		tap_diag "got status '$TGT_GOT_STATUS', driver $drv; output diff:"
		diff "$TGT_OUT" "$OUT" | head -10 | sed 's/^/#   /'
	fi
}

for c in "${TGT_CASES[@]}"; do
	run_one "$c" O2-pie
done
for c in single threads forkexec exceptions pthread_exit dlopen \
	signals-crash; do
	tgt_case "$c"
	for v in $(tgt_variants "$TGT_PROG"); do
		[ "$v" = O2-pie ] && continue
		run_one "$c" "$v"
	done
done
tap_done
