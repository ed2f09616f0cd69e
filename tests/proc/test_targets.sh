#!/bin/bash
# test_targets.sh - every documented target case (tests/targets/cases.sh)
# run under process control gives exactly the stdout and status of a
# direct run: launched plainly, and launched with the runtime library
# while hunch stops every thread every 5 ms, calls into the runtime
# library on one of them, and resumes (signals, blocking reads, thread
# exits, forks and run-time dlopens all happen in between); and the same
# started untraced and attached to (at once, during ld.so's work; or
# 20 ms later with the runtime library injected, detaching after 60 ms).
set -u
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
. "$HUNCH_SOURCE_ROOT/tests/targets/cases.sh"

RUN=$HUNCH_BUILD_ROOT/tests/proc/proc-run
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

check() {  # check MODE_LABEL CASE BINARY LABEL
	local drv=0
	# Empty it first: the driver must not read the previous run's
	# "ready" before the new run has truncated the file.
	: >"$OUT"
	tgt_run_case "$2" "$3" "$OUT" 2>/dev/null || drv=1
	if [ $drv -eq 0 ] && cmp -s "$OUT" "$TGT_OUT" &&
		[ "$TGT_GOT_STATUS" = "$TGT_STATUS" ]; then
		tap_ok 0 "$1 $2 $4: stdout and $TGT_STATUS"
		return
	fi
	tap_ok 1 "$1 $2 $4: stdout and $TGT_STATUS"
	tap_diag "status: got '$TGT_GOT_STATUS', want '$TGT_STATUS'; driver ok: $((1 - drv))"
	printf '%s\n' "$TGT_GOT_ERR" | grep -v '^$' | sed 's/^/# stderr: /'
	diff "$TGT_OUT" "$OUT" | head -20 | sed 's/^/# /'
}

for mode in plain churn attach attach-rt-detach; do
	TGT_AFTER_ATTACH=
	case $mode in
	plain) TGT_LAUNCHER=("$RUN" --);;
	churn) TGT_LAUNCHER=("$RUN" --rtlib --churn 5 --);;
	attach) TGT_LAUNCHER=("$RUN" --attach --churn 5 --);;
	attach-rt-detach)
		TGT_LAUNCHER=("$RUN" --attach --attach-delay 20 --rtlib
			--churn 5 --detach-after 60 --);;
	esac
	cases=("${TGT_CASES[@]}")
	# Attaching needs a program that is still there when the attach
	# completes: the cases that wait for their driver, and demo.  20 ms
	# after exec, threads-wait and dlopen-wait may already be done (their
	# drivers answer at once), and proc-run, being both parent and
	# tracer, would then have reaped the status it must report.
	case $mode in
	attach) cases=(threads-wait signals signals-count dlopen-wait demo);;
	attach-rt-detach) cases=(signals signals-count demo);;
	esac
	# The signals are sent once the attach has happened: sent at once,
	# they could end the program before it (1 run in 100 under load), and
	# an attach to a program that is exiting fails or reaps its status.
	case $mode in attach*) TGT_AFTER_ATTACH=1;; esac
	for name in "${cases[@]}"; do
		tgt_case "$name"
		for v in O2-pie O0-nopie Os-pie-stripped; do
			check $mode "$name" "$TARGETS_DIR/$TGT_PROG-$v" "$v"
		done
	done
done
tap_done
