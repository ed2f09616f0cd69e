#!/bin/bash
# test-attach-refusals.sh - every reason `hunch attach PID` refuses that can
# be produced for real here (and the usage errors before them): a pid that
# does not exist, a zombie, a kernel
# thread, a thread id, a process traced by strace or by another hunch, an
# unprivileged user attaching to root's process or to its own non-dumpable
# one, and root without CAP_SYS_PTRACE (setpriv --bounding-set), as in a
# container that drops it.  Each error is checked
# word for word (pid, reason, advice) with exit status 2, and the target
# keeps running as before: same tracer, not stopped, still making progress.
# (Yama's ptrace_scope and seccomp need a kernel or a container this
# machine does not have: their words are in
# engine/eng_attach_why.c's table.)
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
chmod 755 "$TMP"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT

tracer_of() { awk '/^TracerPid:/ {print $2}' "/proc/$1/status"; }
state_of() { awk '{print $3}' "/proc/$1/stat"; }

# refused NAME WANT -- COMMAND...: exit status 2 and exactly WANT on stderr.
refused() {
	local name=$1 want=$2 out rc
	shift 3
	out=$("$@" 2>&1 >/dev/null); rc=$?
	tap_eq "$rc" 2 "$name: exit status 2"
	tap_eq "$out" "$want" "$name: the error names the pid, the reason and what to do"
}

# A program that appends a line to its file every 20 ms.
start_beat() {  # start_beat FILE; pid in BEAT
	: >"$1"
	bash -c 'while :; do echo beat >>"$1"; read -rt 0.02 <>"$2"; done' \
		beat "$1" "$TMP/never.fifo" &
	BEAT=$!
}
mkfifo "$TMP/never.fifo"

# It still runs: tracer as given, and within 20 s 5 more lines and a look
# at it not stopped (a program under strace is in a tracing stop at each
# of its system calls for a moment: any sample may catch one).
runs_on() {  # runs_on PID FILE TRACER NAME
	local n i s ran=1
	n=$(wc -l <"$2")
	for ((i = 0; i < 2000; i++)); do
		s=$(state_of "$1")
		[ "$s" != t ] && [ "$s" != T ] && [ "$(wc -l <"$2")" -ge $((n + 5)) ] &&
			{ ran=0; break; }
		sleep 0.01
	done
	tap_ok $([ "$(tracer_of "$1")" = "$3" ] && [ $ran = 0 ]; echo $?) \
		"$4: the target runs on (tracer $(tracer_of "$1"), state $s, $(wc -l <"$2") lines)"
}

# --- usage: no pid, a name or a non-number instead of a pid (status 1) ------
usage() {  # usage NAME WANT ARG...
	local name=$1 want=$2 out rc
	shift 2
	out=$("$HUNCH" attach "$@" 2>&1 >/dev/null); rc=$?
	tap_eq "$rc" 1 "$name: exit status 1"
	tap_eq "$out" "$want" "$name: says what to give"
}
usage "no pid" "hunch attach: name one process id: hunch attach [options] PID (pgrep NAME or ps -e finds it)"
usage "a program's name" "hunch attach: 'sleep' is not a process id: give its number (pgrep sleep lists the pids of programs named so)" sleep
usage "pid 0" "hunch attach: '0' is not a process id: give a number > 0" 0

# --- no such process ---------------------------------------------------------
nopid=4000000; while [ -e /proc/$nopid ]; do nopid=$((nopid + 1)); done
refused "no such pid" \
	"hunch: cannot attach to process $nopid: no process $nopid (has it exited?): check the pid with ps" \
	-- "$HUNCH" attach "$nopid"

# --- a zombie -----------------------------------------------------------------
# A child that exits at once and a parent that never reaps it.
/usr/bin/python3 -c 'import os, time
if os.fork() == 0:
    os._exit(0)
time.sleep(600)' &
zparent=$!
for ((i = 0; i < 2000; i++)); do
	zpid=$(ps -o pid= -o stat= --ppid "$zparent" | awk '$2 ~ /^Z/ {print $1}')
	[ -n "$zpid" ] && break; sleep 0.01
done
refused "a zombie" \
	"hunch: cannot attach to process $zpid (python3): it is a zombie: it has exited and only waits for its parent to reap it: there is nothing to attach to; start the program again under hunch (hunch run -- PROG)" \
	-- "$HUNCH" attach "$zpid"
tap_eq "$(state_of "$zpid")" Z "a zombie: still a zombie, untouched"
kill "$zparent"; wait "$zparent" 2>/dev/null

# --- a kernel thread ------------------------------------------------------------
# kthreadd is pid 2 unless hunch runs in its own pid namespace.
kt=$(awk '{print $2}' /proc/2/stat 2>/dev/null)
if [ "$kt" = "(kthreadd)" ]; then
	refused "a kernel thread" \
		"hunch: cannot attach to process 2 (kthreadd): it is a kernel thread, which runs no program of its own and cannot be traced: give the pid of a user program (ps -e lists them; kernel threads are the [bracketed] names of ps -ef)" \
		-- "$HUNCH" attach 2
else
	tap_ok 0 "# SKIP pid 2 is not kthreadd here ($kt)"
	tap_ok 0 "# SKIP pid 2 is not kthreadd here ($kt)"
fi

# --- a thread, not a process ------------------------------------------------------
/usr/bin/python3 -c 'import threading, sys
threading.Thread(target=sys.stdin.read).start()
print("up", flush=True)
sys.stdin.read()' <>"$TMP/never.fifo" >"$TMP/py.out" &
py=$!
for ((i = 0; i < 2000; i++)); do grep -q up "$TMP/py.out" && break; sleep 0.01; done
tid=$(ls "/proc/$py/task" | grep -vx "$py" | head -1)
refused "a thread id" \
	"hunch: cannot attach to process $tid (python3): it is a thread of process $py, not a process: attach to $py" \
	-- "$HUNCH" attach "$tid"
kill "$py"; wait "$py" 2>/dev/null

# --- traced by strace -------------------------------------------------------------
start_beat "$TMP/b1"
strace -q -o /dev/null -p "$BEAT" &
st=$!
for ((i = 0; i < 2000; i++)); do [ "$(tracer_of "$BEAT")" = "$st" ] && break; sleep 0.01; done
refused "traced by strace" \
	"hunch: cannot attach to process $BEAT (bash): it is already traced by process $st (strace): stop that strace (Ctrl-C in its terminal, or kill -INT $st): it detaches and the program runs on; then try again" \
	-- "$HUNCH" attach "$BEAT"
runs_on "$BEAT" "$TMP/b1" "$st" "traced by strace"
kill -INT "$st"; wait "$st"
runs_on "$BEAT" "$TMP/b1" 0 "after strace's Ctrl-C, as the advice says"
kill "$BEAT"; wait "$BEAT" 2>/dev/null

# --- traced by another hunch --------------------------------------------------------
start_beat "$TMP/b2"
"$HUNCH" attach --seconds 600 "$BEAT" 2>"$TMP/first.err" &
first=$!
for ((i = 0; i < 3000; i++)); do [ "$(tracer_of "$BEAT")" = "$first" ] && break; sleep 0.01; done
refused "traced by another hunch" \
	"hunch: cannot attach to process $BEAT (bash): it is already traced by process $first (hunch): end that hunch (q in its dashboard, or kill -TERM $first): it detaches and the program runs on; then try again" \
	-- "$HUNCH" attach "$BEAT"
runs_on "$BEAT" "$TMP/b2" "$first" "traced by another hunch"
kill -TERM "$first"; wait "$first"
runs_on "$BEAT" "$TMP/b2" 0 "after kill -TERM of the first hunch, as the advice says"
kill "$BEAT"; wait "$BEAT" 2>/dev/null

# --- another user's process -----------------------------------------------------------
if [ "$(id -u)" = 0 ]; then
	cp "$HUNCH" "$HUNCHRT" "$TMP/"
	chmod 755 "$TMP/hunch"
	start_beat "$TMP/b3"
	HUNCH_RTLIB=$TMP/libhunchrt.so refused "an unprivileged user, root's process" \
		"hunch: cannot attach to process $BEAT (bash): it belongs to user root (uid 0) and hunch runs as uid 65534 (nobody): run hunch as that user, or as root" \
		-- setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/hunch" attach "$BEAT"
	runs_on "$BEAT" "$TMP/b3" 0 "an unprivileged user, root's process"
	kill "$BEAT"; wait "$BEAT" 2>/dev/null

	# A program of the same user that made itself non-dumpable.
	mkdir -m 777 "$TMP/nb"
	: >"$TMP/nb/b4"; chmod 666 "$TMP/nb/b4"
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import ctypes, sys, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
while True:
    with open(sys.argv[1], "a") as f:
        f.write("beat\n")
    time.sleep(0.02)' "$TMP/nb/b4" &
	nd=$!
	for ((i = 0; i < 2000; i++)); do [ -s "$TMP/nb/b4" ] && break; sleep 0.01; done
	HUNCH_RTLIB=$TMP/libhunchrt.so refused "a non-dumpable program of the same user" \
		"hunch: cannot attach to process $nd (python3): not permitted: the program is setuid, setgid or non-dumpable, or a security module forbids it: run hunch as root, or launch the program under hunch (hunch run -- PROG)" \
		-- setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/hunch" attach "$nd"
	runs_on "$nd" "$TMP/nb/b4" 0 "a non-dumpable program of the same user"
	kill "$nd"; wait "$nd" 2>/dev/null

	# Root without CAP_SYS_PTRACE (as in a container that drops it), on
	# a root process, which holds more capabilities than hunch then.
	start_beat "$TMP/b5"
	refused "root without CAP_SYS_PTRACE" \
		"hunch: cannot attach to process $BEAT (bash): it holds capabilities hunch lacks, and hunch runs without CAP_SYS_PTRACE: give hunch that capability (in a container: docker run --cap-add=SYS_PTRACE), or launch the program under hunch (hunch run -- PROG)" \
		-- setpriv --bounding-set=-sys_ptrace "$HUNCH" attach "$BEAT"
	runs_on "$BEAT" "$TMP/b5" 0 "root without CAP_SYS_PTRACE"
	kill "$BEAT"; wait "$BEAT" 2>/dev/null
else
	for i in 1 2 3 4 5 6 7 8 9; do tap_ok 0 "# SKIP needs root to switch to nobody"; done
fi
tap_done
