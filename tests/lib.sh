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

# tree_pids PID: every descendant of PID, parents before children.
tree_pids() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		tree_pids "$c"
	done
}

# wait_bounded PID SECONDS: wait for a background job (hunch and the
# program it runs) for at most SECONDS.  A job still running then has
# hung: what every process of its tree was doing (state, tracer, system
# call, kernel stack) and hunch's own threads' stacks go to the TAP log
# as diagnostics, the tree is killed, and the status is 124, so that
# the test fails with a check that says so and the log shows where it
# stood, instead of meson's silent timeout.
wait_bounded() {
	local pid=$1 limit=$2 t=0 p rc
	while kill -0 "$pid" 2>/dev/null && [ "$t" -lt "$limit" ]; do
		sleep 1
		t=$((t + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		{
			echo "still running after $limit s; the process tree:"
			ps -eo pid,ppid,stat,wchan:32,etime,args --forest
			for p in $(tree_pids "$pid"); do
				echo "== pid $p: $(grep -E '^(State|TracerPid)' \
					/proc/$p/status 2>/dev/null | tr '\n\t' '  ')"
				for t in /proc/$p/task/*; do
					echo "   task ${t##*/}: $(cut -d' ' -f3 $t/stat 2>/dev/null) syscall $(cat $t/syscall 2>/dev/null)"
				done
				sed 's/^/   /' /proc/$p/stack 2>/dev/null
			done
			command -v gdb > /dev/null && gdb -p "$pid" -batch \
				-ex "thread apply all bt" 2>&1 | grep -E '^(#|Thread)'
		} | tap_lines
		kill -9 "$pid" $(tree_pids "$pid") 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}

# A shell script's first command (sh -c "$UNTIL_ENABLED; ..."): busy
# until the search has enabled an experiment on it, known from the
# journal at $E2E_JOURNAL, read with builtins only, so that it starts no
# process of its own.  What runs after it (an exec, a fork) then meets
# a search under way; a fixed wait raced a slow start on a loaded
# machine.
UNTIL_ENABLED='until [ -n "$e" ]; do [ -r "$E2E_JOURNAL" ] && while read -r l; do case $l in *\"t\":\"enable\"*) e=1; break ;; esac; done < "$E2E_JOURNAL"; done'
