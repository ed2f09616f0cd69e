# tests/lib.sh - TAP helpers for shell tests (source it).
# Every check prints "ok N - name" or "not ok N - name"; tap_done prints
# the plan and sets the exit status.
TAP_N=0
TAP_FAILED=0

tap_ok() {  # tap_ok COND_STATUS NAME...
	local status=$1; shift
	TAP_N=$((TAP_N + 1))
	if [ "$status" -eq 0 ]; then
		echo "ok $TAP_N - $*"
	else
		echo "not ok $TAP_N - $*"
		TAP_FAILED=$((TAP_FAILED + 1))
	fi
}

tap_eq() {  # tap_eq GOT WANT NAME...
	local got=$1 want=$2; shift 2
	if [ "$got" = "$want" ]; then
		tap_ok 0 "$*"
	else
		tap_ok 1 "$*"
		printf '%s\n' "$got" | head -c 2000 | sed '1s/^/  got:  /' | tap_lines
		printf '%s\n' "$want" | head -c 2000 | sed '1s/^/  want: /' | tap_lines
	fi
}

# Every line of a diagnostic starts with "#": a bare second line is not
# TAP (meson complains) and one starting "ok" or "not ok" would be
# counted as a test case.
tap_lines() { sed 's/^/# /'; }
tap_diag() { printf '%s\n' "$*" | tap_lines; }

tap_done() {
	echo "1..$TAP_N"
	[ "$TAP_FAILED" -eq 0 ]
}

# batch_status RC REPORT: a batch run's exit status as a test judges it.
# 3 (incomplete) only because CPUstarved, measured from the kernel, was
# still being tested when a short search stopped counts as 0: on a
# loaded machine (the test suite's own load) the program's run-queue
# wait hovers near that threshold and keeps crossing it.  Anything else
# is returned as is.
batch_status() {
	local rc=$1 report=$2
	if [ "$rc" -eq 3 ] && [ -f "$report" ] && jq -e '[.not_tested[] |
		select(.top_level)] | length > 0 and all(.hypothesis ==
		"CPUstarved" and (.kind == "stopped" or .kind == "target_ended"))' \
		"$report" > /dev/null 2>&1; then
		echo 0
	else
		echo "$rc"
	fi
}
