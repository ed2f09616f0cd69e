#!/bin/bash
# test-cli.sh - the hunch command end to end on real programs: the demo,
# where axis of a running process, attach and detach, hunch ending by
# SIGTERM/SIGINT/SIGHUP mid-run, and every setup error (message, exit
# status, nothing left behind: no stopped or traced process, no
# /dev/shm/hunch-* object).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
. "$HUNCH_SOURCE_ROOT/tests/targets/cases.sh"
SRC=$HUNCH_SOURCE_ROOT/tests/targets
THREADS=$TARGETS_DIR/threads-O2-pie
TMP=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT

wait_line() { tgt_wait_line "$@" 2>/dev/null; }  # FILE LINE (10 s)

wait_gone() {  # wait_gone PID  (20 s): for processes that are not our children
	local i
	for ((i = 0; i < 2000; i++)); do
		[ -e "/proc/$1" ] || return 0
		[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
		sleep 0.01
	done
	return 1
}

# child_running PARENT BINARY: pid of PARENT's child running BINARY
child_running() { TGT_LAUNCHER=("$HUNCH") tgt_target_pid "$@"; }

tracer_of() { awk '/^TracerPid:/ {print $2}' "/proc/$1/status"; }
state_of() { awk '{print $3}' "/proc/$1/stat"; }

# Neither traced nor stopped: the program runs as if hunch never came.
untouched() {  # untouched PID NAME
	local t s
	t=$(tracer_of "$1") s=$(state_of "$1")
	tap_ok $([ "$t" = 0 ] && [ "$s" != t ] && [ "$s" != T ]; echo $?) \
		"$2: not traced (tracer $t) and not stopped (state $s)"
}

# Stopped or traced processes running this build's programs (other test
# runs on the same machine have their own build directories).
stopped_now() {
	local st pid comm
	ps -eo stat=,pid=,comm= | while read -r st pid comm; do
		case $st in t*|T*) ;; *) continue ;; esac
		case $(readlink "/proc/$pid/exe") in
		"$HUNCH_BUILD_ROOT"/*|/tmp/hunch-nobody.*) echo "$pid $comm" ;;
		esac
	done
}
shm_now() { ls /dev/shm | grep '^hunch-'; }
# Only what appeared during this test counts (other tests may run).
STOPPED_BEFORE=$(stopped_now)
nopid_for_sweep=4000000; while [ -e /proc/$nopid_for_sweep ]; do nopid_for_sweep=$((nopid_for_sweep + 1)); done
SHM_BEFORE=$(shm_now)

nothing_left() {  # nothing_left NAME: no new traced/stopped process or shm object
	local stopped shm
	stopped=$(comm -13 <(sort <<<"$STOPPED_BEFORE") <(stopped_now | sort) | grep -v ' ps$')
	shm=$(comm -13 <(sort <<<"$SHM_BEFORE") <(shm_now | sort))
	tap_ok $([ -z "$stopped$shm" ]; echo $?) "$1: nothing left behind${stopped:+ (stopped: $stopped)}${shm:+ (shm: $shm)}"
}

start_threads() {  # start_threads WAITFILE OUT ERR: background threads target
	"$THREADS" --threads 3 --wait-file "$1" >"$2" 2>"$3" &
	TPID=$!
	wait_line "$3" ready
}

finish_threads() {  # finish_threads WAITFILE OUT NAME
	touch "$1"
	wait "$TPID"
	tap_eq "$?" 0 "$3: the program finished with status 0"
	tap_ok $(cmp -s "$2" "$SRC/threads-wait.expected-out"; echo $?) \
		"$3: and printed exactly its usual output"
}

# --- the demo: hunch with no arguments -------------------------------
"$HUNCH" >"$TMP/demo.out" 2>"$TMP/demo.err"
tap_eq "$?" 0 "hunch with no arguments runs the demo and exits 0"
tap_ok $(grep -q 'where axis of hunch-demo' "$TMP/demo.err"; echo $?) "the demo shows its where axis"
tap_ok $(grep -qx '      demo_hot_loop' "$TMP/demo.err"; echo $?) "with the demo's functions under demo.c"
tap_ok $(grep -q ':demo_worker appeared' "$TMP/demo.err"; echo $?) "and its worker threads named by start function"
tap_ok $(grep -q 'exited with status 0' "$TMP/demo.err"; echo $?) "and how it ended"
tap_ok $(grep -qx 'demo done' "$TMP/demo.out"; echo $?) "the demo's own output is untouched"

# --- hunch run --where stops at main ------------------------------------
"$HUNCH" run --where -- "$TARGETS_DIR/single-O0-nopie" >/dev/null 2>"$TMP/w.err" </dev/null
tap_eq "$?" 0 "hunch run --where single exits with single's status"
tap_ok $(grep -qx '      st_compute' "$TMP/w.err"; echo $?) "the where axis at main lists single's functions"
tap_ok $(grep -Eq '^    [0-9]+:main$' "$TMP/w.err"; echo $?) "and its main thread"
tap_ok $(grep -Eqx '  libc.so.6 \([0-9]+ functions\)' "$TMP/w.err"; echo $?) "and the shared libraries loaded by then, with their function counts"

# --- libraries loaded and unloaded while the program runs ----------------
DL=$TARGETS_DIR/dlopen-O2-pie
"$HUNCH" run --verbose -- "$DL" --wait-file "$TMP/dlw" >"$TMP/dl.out" 2>"$TMP/dl.err" &
hpid=$!
wait_line "$TMP/dl.err" "waiting for load" && touch "$TMP/dlw"
wait_line "$TMP/dl.err" "waiting for unload" && touch "$TMP/dlw.2"
wait "$hpid"
tap_eq "$?" 0 "hunch run dlopen --wait-file: the program's status"
tap_ok $(grep -Eq '^hunch: library /Code/libtgtplugin.so loaded \(8 functions\)$' "$TMP/dl.err"; echo $?) \
	"the plugin appears in the where axis when dlopen loads it, with its 8 functions (2 from plugin.c, 6 from the toolchain)"
tap_ok $(grep -q '^hunch: library /Code/libtgtplugin.so unloaded$' "$TMP/dl.err"; echo $?) \
	"and is retired when dlclose unloads it"
tap_ok $(cmp -s "$TMP/dl.out" "$SRC/dlopen-wait.expected-out"; echo $?) "the program's output is unchanged"

# --- where --pid on a running multi-threaded program ---------------------
start_threads "$TMP/wf1" "$TMP/t1.out" "$TMP/t1.err"
"$HUNCH" where --pid "$TPID" >"$TMP/where.out" 2>"$TMP/where.err"
tap_eq "$?" 0 "hunch where --pid exits 0"
ntasks=$(ls /proc/$TPID/task | wc -l)
nthreads=$(grep -c "^/Process/$TPID/[0-9]" "$TMP/where.out")
tap_eq "$nthreads" "$ntasks" "where --pid lists every thread ($ntasks)"
tap_ok $(grep -qx "/Process/$TPID/$TPID:main" "$TMP/where.out"; echo $?) "the main thread is named main"
nworkers=$(grep -c "^/Process/$TPID/[0-9]*:mt_worker$" "$TMP/where.out")
tap_eq "$nworkers" 3 "the three workers are named by their start function mt_worker"
tap_ok $(grep -qx '/Code/libc.so.6/malloc.c/malloc' "$TMP/where.out"; echo $?) "libc's functions are in the Code hierarchy"
tap_ok $(grep -qx '/Code/threads-O2-pie/threads.c/mt_worker' "$TMP/where.out"; echo $?) "and the program's own, by source file"
untouched "$TPID" "after where --pid"
finish_threads "$TMP/wf1" "$TMP/t1.out" "after where --pid"

# --- attach, load the runtime library, detach --------------------------
start_threads "$TMP/wf2" "$TMP/t2.out" "$TMP/t2.err"
"$HUNCH" attach --seconds 0.5 "$TPID" 2>"$TMP/attach.err"
tap_eq "$?" 0 "hunch attach --seconds 0.5 exits 0"
tap_ok $(grep -q "detached from $TPID (pid $TPID), which runs on" "$TMP/attach.err"; echo $?) "and says it detached"
tap_ok $(grep -q libhunchrt.so "/proc/$TPID/maps"; echo $?) "the runtime library was loaded by dlopen"
untouched "$TPID" "after attach"
nothing_left "after attach"
finish_threads "$TMP/wf2" "$TMP/t2.out" "after attach"

# --- a stale attach segment of a killed hunch is swept ---------------------
dead=$nopid_for_sweep
: >"/dev/shm/hunch-$dead-00000000000000000000000000000000"
: >"/dev/shm/hunch-$$-11111111111111111111111111111111"
start_threads "$TMP/wf6" "$TMP/t6.out" "$TMP/t6.err"
"$HUNCH" attach "$TPID" 2>/dev/null
tap_ok $([ ! -e "/dev/shm/hunch-$dead-00000000000000000000000000000000" ]; echo $?) \
	"attach removes the shm name left by a hunch that was killed (pid $dead)"
tap_ok $([ -e "/dev/shm/hunch-$$-11111111111111111111111111111111" ]; echo $?) \
	"and keeps the name of a hunch that still runs"
rm -f "/dev/shm/hunch-$$-11111111111111111111111111111111"
finish_threads "$TMP/wf6" "$TMP/t6.out" "after the sweep"

# --- hunch ended by a signal while running a program ----------------------
for sig in TERM INT HUP; do
	env --default-signal=INT "$HUNCH" run -- "$THREADS" --threads 3 \
		--wait-file "$TMP/wf-$sig" >"$TMP/s.out" 2>"$TMP/s.err" &
	hpid=$!
	wait_line "$TMP/s.err" ready
	tpid=$(child_running "$hpid" "$THREADS")
	kill -s "$sig" "$hpid"
	wait "$hpid"
	rc=$?
	tap_eq "$rc" $((128 + $(kill -l $sig))) "SIG$sig ends hunch with status 128+$(kill -l $sig)"
	tap_ok $(grep -q 'detached from' "$TMP/s.err"; echo $?) "SIG$sig: hunch says it detached"
	untouched "$tpid" "SIG$sig to hunch"
	touch "$TMP/wf-$sig"
	wait_gone "$tpid"
	tap_ok $(cmp -s "$TMP/s.out" "$SRC/threads-wait.expected-out"; echo $?) \
		"SIG$sig to hunch: the program finished with its usual output"
done
nothing_left "after signals"

# --- errors ----------------------------------------------------------------
expect_error() {  # expect_error STATUS PATTERN NAME -- COMMAND...
	local want=$1 pat=$2 name=$3 out rc
	shift 4
	out=$("$@" 2>&1 >/dev/null); rc=$?
	tap_eq "$rc" "$want" "$name: exit status $want"
	tap_ok $(grep -qiE -- "$pat" <<<"$out"; echo $?) "$name: says '$pat': $out"
}

expect_error 2 '/nonexistent/prog' "run a missing program" -- \
	"$HUNCH" run /nonexistent/prog
nothing_left "missing program"
printf 'just text\n' >"$TMP/text" && chmod +x "$TMP/text"
expect_error 2 "$TMP/text.*not an ELF" "run a text file" -- "$HUNCH" run "$TMP/text"
nothing_left "text file"
# A 64-byte ELF header that says 32-bit x86 (ELFCLASS32, EM_386).
printf '\177ELF\001\001\001\000\000\000\000\000\000\000\000\000\002\000\003\000\001\000\000\000' >"$TMP/elf32"
head -c 44 /dev/zero >>"$TMP/elf32"; chmod +x "$TMP/elf32"
expect_error 2 "$TMP/elf32.*(32-bit|x86-64)" "run a 32-bit ELF" -- "$HUNCH" run "$TMP/elf32"
nothing_left "32-bit ELF"
nopid=4000000; while [ -e /proc/$nopid ]; do nopid=$((nopid + 1)); done
expect_error 2 "no process $nopid" "attach to a pid that does not exist" -- \
	"$HUNCH" attach "$nopid"
expect_error 1 "not a process id" "attach to a non-number" -- "$HUNCH" attach abc
expect_error 1 "name the program" "run without a program" -- "$HUNCH" run
expect_error 1 "unknown option" "an unknown option" -- "$HUNCH" --bogus
expect_error 2 "cannot open /nonexistent/prog" "points of a missing file" -- \
	"$HUNCH" points /nonexistent/prog
expect_error 1 "no function 'nosuchfn' in .*single-O2-pie" "points of an unknown function" -- \
	"$HUNCH" points "$TARGETS_DIR/single-O2-pie" nosuchfn

# Already traced: a second hunch attaches while the first holds the process.
start_threads "$TMP/wf3" "$TMP/t3.out" "$TMP/t3.err"
# The first stays until SIGTERM ends it (it detaches then): a few seconds
# of its own could run out before the second starts on a loaded machine.
"$HUNCH" attach --seconds 120 "$TPID" 2>"$TMP/first.err" &
first=$!
for ((i = 0; i < 3000; i++)); do
	[ "$(tracer_of "$TPID")" != 0 ] && break; sleep 0.01
done
expect_error 2 "already traced.*$first" "attach to a process hunch already traces" -- \
	"$HUNCH" attach "$TPID"
kill -TERM "$first"
wait "$first"
tap_ok $(grep -q "detached from $TPID" "$TMP/first.err"; echo $?) \
	"the first hunch, ended by SIGTERM, detached"
untouched "$TPID" "after the refused second attach"
finish_threads "$TMP/wf3" "$TMP/t3.out" "after the refused second attach"

# Not permitted: an unprivileged user attaching to root's process is told
# whose process it is and what to do.  Binaries are copied somewhere
# world-readable first, in case the build lives under a private home.
NB=$(mktemp -d /tmp/hunch-nobody.XXXXXX); chmod 755 "$NB"
cp "$HUNCH" "$HUNCHRT" "$TARGETS_DIR/single-O2-pie" "$NB/"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
start_threads "$TMP/wf5" "$TMP/t5.out" "$TMP/t5.err"
HUNCH_RTLIB=$NB/libhunchrt.so expect_error 2 \
	"belongs to user root.*run hunch as that user, or as root" \
	"attach to another user's process" -- as_nobody "$NB/hunch" attach "$TPID"
untouched "$TPID" "after the refused attach"
finish_threads "$TMP/wf5" "$TMP/t5.out" "after the refused attach"
(cd / && env -u HUNCH_TEST_VAR HUNCH_RTLIB=$NB/libhunchrt.so \
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$NB/hunch" run -- "$NB/single-O2-pie" >"$TMP/nb.out" 2>"$TMP/nb.err" </dev/null)
tap_eq "$?" 0 "an unprivileged user runs a program under hunch"
tap_ok $(cmp -s "$TMP/nb.out" "$SRC/single-unset.expected-out"; echo $?) "with exactly its usual output"
rm -rf "$NB"

# The runtime library cannot be loaded.
printf 'not a library\n' >"$TMP/notalib.so"
HUNCH_RTLIB=$TMP/notalib.so expect_error 2 "notalib.so" "run with a broken runtime library" -- \
	"$HUNCH" run "$TARGETS_DIR/single-O2-pie"
nothing_left "broken runtime library on run"
start_threads "$TMP/wf4" "$TMP/t4.out" "$TMP/t4.err"
HUNCH_RTLIB=$TMP/notalib.so expect_error 2 "notalib.so" "attach with a broken runtime library" -- \
	"$HUNCH" attach "$TPID"
untouched "$TPID" "after the failed injection"
nothing_left "broken runtime library on attach"
finish_threads "$TMP/wf4" "$TMP/t4.out" "after the failed injection"
tap_done
