# tests/targets/cases.sh - the documented invocations of every target,
# as data plus a runner.  Source it from bash (needs TARGETS_DIR and
# HUNCH_SOURCE_ROOT, as in meson's test_env).
#
#   tgt_case NAME        sets, for case NAME:
#     TGT_PROG           program name (binary: $TARGETS_DIR/<prog>-<variant>)
#     TGT_ARGS           argument array (after argv[0]); the word
#                        @WAIT_FILE@ stands for a fresh path that does not
#                        exist yet (the driver creates it)
#     TGT_ENV            array of VAR=VALUE added to the environment;
#                        HUNCH_TEST_VAR is unset unless listed here
#     TGT_CWD            working directory to run in
#     TGT_STDIN          file to use as stdin
#     TGT_OUT            file holding the exact expected stdout
#     TGT_STATUS         "exit N" or "signal NAME" (e.g. "signal SEGV")
#     TGT_DRIVER         function run while the program runs, or empty
#                        when the program finishes by itself; called as
#                        DRIVER PID STDOUT_FILE STDERR_FILE WAIT_FILE BINARY
#   tgt_run_case NAME BINARY OUT_FILE   runs BINARY as case NAME with its
#                        stdout in OUT_FILE; sets TGT_GOT_STATUS (same
#                        form as TGT_STATUS) and returns 1 if the driver
#                        failed.
#   TGT_LAUNCHER         optional command prefix (array), e.g.
#                        TGT_LAUNCHER=("$HUNCH" run --): the case then runs
#                        as LAUNCHER... BINARY ARGS, with the case's cwd,
#                        environment and stdin given to the launcher, and
#                        the drivers signal and inspect the program, found
#                        as the launcher's child (tgt_target_pid).
#
# Exit statuses above 128 are never used by a case, so a shell status
# 128+N always means "killed by signal N".
TGT_SRC=${HUNCH_SOURCE_ROOT:-.}/tests/targets
[ -n "${TGT_LAUNCHER+set}" ] || TGT_LAUNCHER=()

# Every case name, in the order the README lists them.
TGT_CASES=(single single-unset threads threads-wait forkexec
	signals signals-count signals-crash signals-abort signals-raise-quit
	signals-raise-kill exceptions pthread_exit dlopen dlopen-wait
	blockread demo
	bn_cpu_deep bn_mutex bn_condvar bn_smallwrites bn_fsync bn_onebusy
	bn_phases bn_sleepy)

# Every program, and the variants each is built in.
TGT_PROGS=(single threads forkexec signals exceptions pthread_exit dlopen
	blockread demo
	bn_cpu_deep bn_mutex bn_condvar bn_smallwrites bn_fsync bn_onebusy
	bn_phases bn_sleepy)
tgt_variants() {  # tgt_variants PROG: prints variant suffixes
	local opt pie
	for opt in O0 O2 O3 Os; do
		for pie in pie nopie; do
			echo "$opt-$pie"
			echo "$opt-$pie-stripped"
		done
	done
	case $1 in single|threads) echo clang-O2-pie; echo clang-O2-pie-stripped;; esac
}

tgt_case() {
	TGT_PROG=${1%%-*}
	TGT_ARGS=() TGT_ENV=() TGT_CWD=/ TGT_STDIN=/dev/null
	TGT_OUT=$TGT_SRC/$1.expected-out TGT_STATUS="exit 0" TGT_DRIVER=
	case $1 in
	single)
		TGT_ARGS=(alpha 'two words' '' --exit 3)
		TGT_ENV=('HUNCH_TEST_VAR=hello world')
		TGT_STDIN=$TGT_SRC/single.stdin TGT_STATUS="exit 3";;
	single-unset) ;;
	threads) ;;
	threads-wait)
		TGT_ARGS=(--threads 3 --wait-file @WAIT_FILE@)
		TGT_DRIVER=tgt_drive_threads_wait;;
	forkexec) ;;
	signals) TGT_STATUS="exit 42" TGT_DRIVER=tgt_drive_signals;;
	signals-count)
		TGT_ARGS=(--count 2) TGT_DRIVER=tgt_drive_signals_count;;
	signals-crash) TGT_ARGS=(--crash) TGT_STATUS="signal SEGV";;
	signals-abort) TGT_ARGS=(--abort) TGT_STATUS="signal ABRT";;
	signals-raise-quit) TGT_ARGS=(--raise SIGQUIT) TGT_STATUS="signal QUIT";;
	signals-raise-kill) TGT_ARGS=(--raise KILL) TGT_STATUS="signal KILL";;
	exceptions) ;;
	pthread_exit) ;;
	dlopen) ;;
	dlopen-wait)
		TGT_ARGS=(--wait-file @WAIT_FILE@) TGT_DRIVER=tgt_drive_dlopen_wait;;
	blockread) TGT_STDIN=$TGT_SRC/blockread.stdin;;
	demo) TGT_ARGS=(--seconds 0.2);;
	bn_cpu_deep|bn_mutex|bn_condvar|bn_smallwrites|bn_fsync|bn_onebusy|bn_phases|bn_sleepy)
		TGT_ARGS=(--seconds 0.3);;
	*) echo "cases.sh: no case $1" >&2; return 1;;
	esac
}

# tgt_wait_line FILE LINE: waits (up to 10 s) until FILE has LINE.
tgt_wait_line() {
	local i
	for ((i = 0; i < 1000; i++)); do
		grep -qxF -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	echo "# timed out waiting for '$2' in $1" >&2
	return 1
}

# tgt_target_pid PID BINARY: prints the pid of the program itself: PID,
# or with a launcher, PID's child once it runs BINARY (waits up to 10 s).
tgt_target_pid() {
	local i kid
	if [ ${#TGT_LAUNCHER[@]} -eq 0 ]; then
		echo "$1"
		return 0
	fi
	for ((i = 0; i < 1000; i++)); do
		for kid in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
			[ /proc/"$kid"/exe -ef "$2" ] && echo "$kid" && return 0
		done
		sleep 0.01
	done
	echo "# no child of $1 runs $2" >&2
	return 1
}

# Waits until process PID has been traced (TracerPid set), up to 10 s:
# an attach that comes after the program's end tests nothing, and the
# program's exit status would be the tracer's to reap.
tgt_wait_traced() {  # tgt_wait_traced PID
	local i tracer
	for ((i = 0; i < 1000; i++)); do
		tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" \
			2>/dev/null)
		[ -n "$tracer" ] && [ "$tracer" != 0 ] && return 0
		sleep 0.01
	done
	echo "# process $1 was never traced" >&2
	return 1
}

# Sends each signal only after the previous one was printed: same-kind
# signals pending together would merge, and the order must be fixed.
# With TGT_AFTER_ATTACH set (a launcher that attaches to the program
# some time after it starts), the first waits for the attach.
tgt_send_in_turn() {  # tgt_send_in_turn PID BINARY OUT SIG...
	local pid out=$3 sig
	pid=$(tgt_target_pid "$1" "$2") || return 1
	shift 3
	tgt_wait_line "$out" ready || return 1
	if [ -n "${TGT_AFTER_ATTACH:-}" ]; then
		tgt_wait_traced "$pid" || return 1
	fi
	for sig in "$@"; do
		kill -s "$sig" "$pid" || return 1
		tgt_wait_line "$out" "SIG$sig" || return 1
	done
}

tgt_drive_signals() { tgt_send_in_turn "$1" "$5" "$2" USR1 USR2 HUP INT TERM; }
tgt_drive_signals_count() { tgt_send_in_turn "$1" "$5" "$2" USR1 USR2; }

tgt_drive_threads_wait() {
	tgt_wait_line "$3" ready && touch "$4"
}

# Also checks the plugin is mapped exactly between the two waits.
tgt_drive_dlopen_wait() {
	local pid err=$3 wait=$4
	tgt_wait_line "$err" "waiting for load" || return 1
	pid=$(tgt_target_pid "$1" "$5") || return 1
	grep -q libtgtplugin.so "/proc/$pid/maps" && return 1
	touch "$wait"
	tgt_wait_line "$err" "waiting for unload" || return 1
	grep -q libtgtplugin.so "/proc/$pid/maps" || return 1
	touch "$wait.2"
}

tgt_status_of() {  # tgt_status_of SHELL_STATUS: prints "exit N"/"signal X"
	if [ "$1" -gt 128 ]; then
		echo "signal $(kill -l "$(($1 - 128))")"
	else
		echo "exit $1"
	fi
}

tgt_run_case() {  # tgt_run_case NAME BINARY OUT_FILE
	local bin=$2 out=$3 err wait rc=0 drv=0 pid arg args=()
	tgt_case "$1" || return 1
	# The run cds to TGT_CWD, so make relative paths absolute first.
	case $out in /*) ;; *) out=$PWD/$out;; esac
	case $bin in /*) ;; *) bin=$PWD/$bin;; esac
	err=$(mktemp) wait=$(mktemp -u)
	# Empty the output before starting: the driver reads it at once, and
	# must not see the previous run's "ready" before the child's own
	# redirection truncates it.
	: >"$out"
	for arg in "${TGT_ARGS[@]}"; do
		[ "$arg" = @WAIT_FILE@ ] && arg=$wait
		args+=("$arg")
	done
	(
		cd "$TGT_CWD" || exit 1
		ulimit -c 0  # crash cases must not leave core files behind
		exec env -u HUNCH_TEST_VAR "${TGT_ENV[@]}" "${TGT_LAUNCHER[@]}" \
			"$bin" "${args[@]}" \
			<"$TGT_STDIN" >"$out" 2>"$err"
	) &
	pid=$!
	if [ -n "$TGT_DRIVER" ]; then
		"$TGT_DRIVER" "$pid" "$out" "$err" "$wait" "$bin" || drv=1
		[ $drv -eq 0 ] || kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" || rc=$?
	TGT_GOT_STATUS=$(tgt_status_of "$rc")
	# The run's stderr (a launcher's reason, when it fails), for a
	# failing check to show.
	TGT_GOT_ERR=$(tail -c 2000 "$err")
	rm -f "$err" "$wait" "$wait.2"
	return $drv
}
