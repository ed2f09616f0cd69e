#!/bin/bash
# test-mpi.sh BN_MPI BN_MPI_TIMER - an MPI job under hunch: `hunch run --batch --
# mpirun -np 4 BN_MPI` (tests/targets/bn_mpi.c built by mpicc, Debian's
# OpenMPI; 4 ranks, rank 0 computes 3x longer than the others before
# each MPI_Barrier):
# - the job's output under hunch is byte-identical to its output run
#   directly, and it exits 0 both ways;
# - the ranks are followed and named by rank: the journal names exactly
#   4 processes "rank 0".."rank 3", each a different child of mpirun;
#   the report shows a ranked process as /Process/rank N, never by pid;
# - the search completes (exit 0) and finds, under this one hunch:
#   rank 0's CPU in bnmpi_compute or bnmpi_work (CPUbound, or CPUdemand
#   under load); ExcessiveMessageWaitingTime true on the job and in
#   MPI_Barrier (PMPI_Barrier: the one function's other name);
# - the estimate against the truth: the ranks' MPI_Barrier and
#   MPI_Bcast calls timed in the same run through MPI's profiling
#   interface (BN_MPI_TIMER, tests/targets/bn_mpi_timer.c, preloaded in
#   the direct run too): each of ranks 1-3's estimate over its
#   experiment within 30% of the timed truth over that window; every
#   conclusion on a rank's process or main thread on the side of the
#   threshold its truth is (none false where the rank waited: its
#   start-up never concludes, a rank counts from its first sample in an
#   MPI wait); each of ranks 1-3 whose truth is above the threshold's
#   band concluded true (the job is run again, once, when the kernel
#   starved one of ranks 1-3 so that rank 0 did not wait least);
#   the finding labelled "estimated from stack samples" (the ranks are
#   not instrumented: CPU samples and switch-out samples, which see a
#   rank yielding its CPU in MPI_Barrier); a load imbalance across the
#   processes whose busiest is rank 0;
# - the replay of the journal prints the live report (ranks included);
# - no rank is left running;
# - one hunch per rank (`mpirun -np 4 sh -c 'hunch run --batch -- BN_MPI'`,
#   the way to instrument ranks): msg_wait is enabled in every rank
#   (MPI_Barrier instrumented in libmpi.so), rank 0 waits in it less
#   than the mean of the other ranks, which is more than 0.2 (the
#   threshold; they wait about two thirds of each round); rank 0's
#   output is the job's usual output.
# Skipped, with the reason, when BN_MPI is empty (mpicc not installed:
# ./dev.sh installs openmpi-bin and libopenmpi-dev).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
bn_mpi=$1 timer=$2
if [ -z "$bn_mpi" ] || ! command -v mpirun >/dev/null; then
	echo "1..0 # SKIP mpicc or mpirun not installed (Debian packages openmpi-bin libopenmpi-dev; ./dev.sh build installs them)"
	exit 0
fi
TMP=$(mktemp -d -p "$HUNCH_BUILD_ROOT" e2e-mpi.XXXXXX)
trap '[ -n "${E2E_KEEP:-}" ] && echo "# kept $TMP" || rm -rf "$TMP"' EXIT
export TMPDIR=$TMP XDG_STATE_HOME=$TMP/state
# mpirun refuses root without these; 4 ranks on fewer cores need
# --oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$TMP/direct-waits" "$TMP/waits"
job=(mpirun -np 4 --oversubscribe -x LD_PRELOAD="$timer" -x BNMPI_TIMER_DIR
	"$bn_mpi" --seconds 20)

program_part() { sed '/^hunch report: /,$d' "$1"; }

BNMPI_TIMER_DIR=$TMP/direct-waits "${job[@]}" > "$TMP/direct.out" \
	2> "$TMP/direct.err"
tap_eq $? 0 "the job run directly exits 0"
tap_eq "$(cat "$TMP/direct.out")" "bn_mpi ranks=4 rounds=20 seconds=20
bn_mpi done" "the job run directly prints its two lines"

# The ranks' timed waits over the whole run, rank 0 first, and whether
# the planted imbalance held: rank 0 waited least.  On a loaded machine
# the kernel may starve one of ranks 1-3 until it, not rank 0, arrives
# last at the barriers; hunch then reports that rank computing and rank
# 0 waiting, rightly, and the checks below, written for the planted
# imbalance, cannot hold: the job is run again, once.
timed_waits() {
	for r in 0 1 2 3; do
		awk '{ s += $2 - $1 } END { printf "%.2f\n", s / 1e9 }' "$1/rank$r.waits"
	done | tr '\n' ' '
}
for attempt in 1 2; do
	rm -rf "$TMP/waits" && mkdir -p "$TMP/waits"
	BNMPI_TIMER_DIR=$TMP/waits "$HUNCH" run --batch --time-limit 120 \
		--report "$TMP/r.json" --journal "$TMP/j.jsonl" -- "${job[@]}" \
		> "$TMP/run.out" 2> "$TMP/run.err"
	rc=$?
	waits=$(timed_waits "$TMP/waits")
	awk '{ for (i = 2; i <= 4; i++) if ($i <= $1) exit 1 }' <<< "$waits" && break
	tap_diag "run $attempt: the ranks' timed waits (s, ranks 0-3) $waits: rank 0 was not the slowest (the kernel starved another rank)"
done
tap_diag "the ranks' timed waits (s, ranks 0-3): $waits"
tap_eq $rc 0 "hunch run --batch -- mpirun: exit 0, the search is complete"
[ $rc -eq 0 ] || tap_diag "$(tail -5 "$TMP/run.err"; jq -c '.not_tested[]? | select(.top_level)' "$TMP/r.json")"
tap_ok $(program_part "$TMP/run.out" | cmp -s - "$TMP/direct.out"; echo $?) \
	"the job's output under hunch is byte-identical to the direct run's"
# The report comes after the job, even when the search completed before
# it ended (the job is then followed to its end): the search ended with
# mpirun's exit 0, and mpirun and the 4 ranks are each listed exited with
# status 0, none running, killed or unseen.
tap_eq "$(grep '^search: ' "$TMP/run.out")" \
	"search: target ended (target exited with status 0)" \
	"the report's search line: ended with mpirun's exit 0"
procs=$(sed -n '/^processes:/,/^$/p' "$TMP/run.out" | grep '^  pid ')
tap_eq "$(sed 's/^  pid [0-9]*: //; s/ at [0-9.]* s$//' <<< "$procs" | sort | uniq -c | sed 's/^ *//')" \
	"5 exited with status 0" \
	"the report lists mpirun and the 4 ranks, each exited with status 0"
mpirun_pid=$(jq -r 'select(.t == "resource" and .kind == "process" and
	.op == "add") | .pid' "$TMP/j.jsonl" | head -1)
named=$(jq -r 'select(.t == "resource" and .kind == "process" and
	.op == "add" and .name != null) | "\(.name) \(.pid)"' "$TMP/j.jsonl")
tap_eq "$(printf '%s\n' "$named" | cut -d' ' -f1-2 | sort)" \
	"rank 0
rank 1
rank 2
rank 3" "the journal names 4 processes rank 0 .. rank 3, once each"
tap_eq "$(printf '%s\n' "$named" | cut -d' ' -f3 | sort -u | grep -vc "^$mpirun_pid\$")" 4 \
	"the 4 ranks are 4 different processes, none of them mpirun ($mpirun_pid)"
pids=$(printf '%s\n' "$named" | cut -d' ' -f3)
# The ranks' /Code is their own program's, not mpirun's: the functions
# of the rank executable are in the where axis, and the /Code roots
# offered for refinement name the ranks' main.
mod=$(basename "$bn_mpi")
tap_eq "$(jq -r --arg m "$mod" 'select(.t == "resource" and .kind == "function" and
	.op == "add" and .module == $m and (.function == "main" or
	.function == "bnmpi_compute")) | .function' "$TMP/j.jsonl" | sort -u)" \
	"bnmpi_compute
main" "the where axis has the ranks' program ($mod: main, bnmpi_compute)"
# Every answer to "the roots of /Code" (journaled `callees` without a
# path) given after the ranks' functions were found offers the ranks'
# main (mpirun's alone before the fix), and there is one at least.
t_found=$(jq -r --arg m "$mod" 'select(.t == "resource" and .kind == "function" and
	.op == "add" and .module == $m) | .ts' "$TMP/j.jsonl" | head -1)
roots=$(jq -r --argjson t "${t_found:-1e9}" --arg m "/Code/$mod/bn_mpi.c/main" \
	'select(.t == "callees" and .path == null and .ts > $t) |
	 [.callees[] | select(. == $m)] | length' "$TMP/j.jsonl")
tap_diag "root answers after the ranks' functions were found (how often each names their main): $(echo $roots)"
tap_ok $([ -n "$roots" ] && ! grep -qvx 1 <<< "$roots"; echo $?) \
	"the roots of /Code offered after the ranks' program was found name its main, once each"
raw=0
for p in $pids; do
	grep '^    where:' "$TMP/run.out" | grep -q "/Process/$p\b" && raw=$((raw + 1))
done
tap_eq $raw 0 "no where: line of the report shows a ranked process by its pid"
# What the search concluded, from the journal's log of conclusions.
concl=$(jq -r 'select(.t == "log") | .text' "$TMP/j.jsonl" |
	sed -n 's/^+[0-9.]*) \([A-Za-z]*\) tested \(true\|false\) for </\1 \2 </p')
rank_pid() { printf '%s\n' "$named" | awk -v r="$1" '$2 == r { print $3 }'; }
r0=$(rank_pid 0)
tap_ok $(grep -Eq "^(CPUbound|CPUdemand) true </Code/$mod/bn_mpi.c/(bnmpi_compute|bnmpi_work),/Process/$r0(/$r0(:main)?)?," <<< "$concl"; echo $?) \
	"rank 0's CPU is found in bnmpi_compute or bnmpi_work (CPUbound or CPUdemand true on rank 0's process or thread)"
tap_ok $(grep -q '^ExcessiveMessageWaitingTime true </Code,/Process,/SyncObject,/Files>' <<< "$concl"; echo $?) \
	"ExcessiveMessageWaitingTime is true on the whole job (the ranks' waits, estimated in mpirun's children)"
tap_ok $(grep -Eq '^ExcessiveMessageWaitingTime true </Code/libmpi[^/]*/[^/]*/P?MPI_Barrier,/Process[,/]' <<< "$concl"; echo $?) \
	"ExcessiveMessageWaitingTime is true in MPI_Barrier (libmpi's PMPI_Barrier)"
# The estimate against the truth timed in the same run (mpi_truth.py:
# rank, focus, estimate, truth over the experiment's window, verdict).
truth=$(python3 "$HUNCH_SOURCE_ROOT/tests/e2e/mpi_truth.py" "$TMP/j.jsonl" "$TMP/waits")
tap_diag "estimate vs truth (rank focus estimate truth verdict):
$truth"
# (The search may enable a node more than once: one line per instance.)
tap_eq "$(awk '$1 >= 1 && $2 == "process" { print $1 }' <<< "$truth" | sort -u | tr '\n' ' ')" "1 2 3 " \
	"the message wait is estimated on each of ranks 1-3's processes"
tap_eq "$(awk '$1 != "job" && $1 >= 1 && $1 <= 3 && !($4 > 0 && $3 / $4 >= 0.7 &&
	$3 / $4 <= 1.3) && !($3 - $4 <= 0.05 && $4 - $3 <= 0.05) { n++ }
	END { print n + 0 }' <<< "$truth")" 0 \
	"every estimate on ranks 1-3 (process or main thread) is within 30% (or 0.05) of the timed truth"
# A conclusion is wrong when its truth lies beyond the threshold's band
# (0.2, hysteresis 5%) on the other side.
tap_eq "$(awk '$1 != "job" && (($5 == "true" && $4 < 0.19) ||
	($5 == "false" && $4 > 0.21)) { n++ } END { print n + 0 }' <<< "$truth")" 0 \
	"no conclusion on a rank's process or main thread is on the wrong side of its timed truth (none false where it waited)"
tap_eq "$(awk '$2 == "process" && $1 >= 1 && $4 > 0.21 && $5 != "true" { n++ }
	END { print n + 0 }' <<< "$truth")" 0 \
	"each of ranks 1-3 whose timed wait is above the threshold is concluded true"
tap_eq "$(awk '$2 == "process" && $1 >= 1 && $4 > 0.21 { print $1 }' <<< "$truth" | sort -u | tr '\n' ' ')" "1 2 3 " \
	"ranks 1-3 each waited above the threshold (timed), as bn_mpi is made to"
# msg_wait's instances that were enabled: how many estimated from
# samples, how many counted otherwise
tap_eq "$(jq -s -r '([.[] | select(.t == "enable" and .metric == "msg_wait") | .req]) as $m |
	[.[] | select(.t == "reply" and .status == 0 and (.req as $q | $m | index($q)))] |
	"\([.[] | select(.sampled)] | length > 0) \([.[] | select(.sampled | not)] | length)"' "$TMP/j.jsonl")" "true 0" \
	"every msg_wait instance enabled is estimated from the ranks' samples, none counted by instrumentation"
# The ranks named in the where: lines of the message-wait bottlenecks
wait_ranks=$(grep -A1 '^ *[0-9]*\. ExcessiveMessageWaitingTime: ' "$TMP/run.out" |
	sed -n 's|^    where: .*/Process/rank \([0-9]\).*|\1|p' | sort -u | tr '\n' ' ')
tap_diag "ranks named waiting in MPI calls: $wait_ranks"
tap_ok $(grep -q '[123]' <<< "$wait_ranks"; echo $?) \
	"the report's message-wait bottlenecks name one of ranks 1-3 at least"
tap_ok $(! grep -q '0' <<< "$wait_ranks"; echo $?) \
	"and never rank 0 (it computes while the others wait)"
tap_ok $(grep -q '^    sampled: estimated from stack samples (CPU samples and switch-outs of the child processes, which hunch follows without instrumenting them)$' "$TMP/run.out"; echo $?) \
	"the message-wait details say how they were estimated"
tap_eq "$(jq -r --argjson p "$r0" '[.spread[] | select(.imbalanced and
	(.hypothesis == "CPUbound" or .hypothesis == "CPUdemand") and
	.max.pid == $p)] | length > 0' "$TMP/r.json")" true \
	"the spread across processes shows a load imbalance whose busiest process is rank 0"
tap_ok $(grep -Eq "^    load imbalance: process $r0, rank 0 has [0-9.]+x the mean of the 5$" "$TMP/run.out"; echo $?) \
	"the report's text names that imbalance's process by its rank"

"$HUNCH" replay --batch "$TMP/j.jsonl" > "$TMP/replay.out" 2> "$TMP/replay.err"
tap_eq $? 0 "replay --batch of the journal exits 0 too"
tap_ok $(sed -n '/^hunch report: /,$p' "$TMP/run.out" |
	cmp -s - "$TMP/replay.out"; echo $?) \
	"the replay prints the live report, ranks included"

left=0
for p in $pids; do [ -d "/proc/$p" ] && left=$((left + 1)); done
tap_eq $left 0 "no rank is left running"

# --- one hunch per rank: the ranks themselves are instrumented ---
# Each hunch's exit status 3 (incomplete) must not make mpirun abort the
# others, hence the `; true`.
mpirun -np 4 --oversubscribe sh -c '"$0" run --batch --time-limit 120 \
	--journal "$1/rank$OMPI_COMM_WORLD_RANK.jsonl" -- "$2" --seconds 4 \
	> "$1/rank$OMPI_COMM_WORLD_RANK.out" 2>&1; true' \
	"$HUNCH" "$TMP" "$bn_mpi" > "$TMP/per-rank.out" 2>&1
tap_eq $? 0 "mpirun of one hunch per rank exits 0"
# msg_wait's mean over the run on the whole rank (the top focus)
msg_wait_mean() {
	local j=$1 req inst
	req=$(jq -r 'select(.t == "enable" and .metric == "msg_wait" and
		.focus[0] == "/Code" and .focus[1] == "/Process") | .req' "$j" | head -1)
	inst=$(jq -r --argjson q "${req:-0}" 'select(.t == "reply" and .req == $q and
		.status == 0) | .inst' "$j")
	[ -n "$inst" ] || { echo none; return; }
	jq -r --argjson n "$inst" 'select(.t == "sample") | . as $s |
		range(0; .i | length) | select($s.i[.] == $n) |
		"\($s.t0) \($s.t1) \($s.v[.])"' "$j" |
		awk '{ d = $2 - $1; w += d * $3; t += d }
		     END { if (t > 0) printf "%.3f\n", w / t; else print "none" }'
}
means=""
for r in 0 1 2 3; do means="$means $(msg_wait_mean "$TMP/rank$r.jsonl")"; done
tap_diag "msg_wait means, ranks 0-3:$means"
tap_eq "$(echo $means | tr ' ' '\n' | grep -c '^[0-9]')" 4 \
	"msg_wait is enabled and sampled in every rank (MPI_Barrier instrumented)"
# Each rank's wait depends on the CPU it got: 8 processes on a loaded
# 2-core machine, a starved rank 1 once arrived last (waits 0.29 0.06
# 0.44 0.56).  The imbalance shows in the ranks together: rank 0, with
# 3x the work, waits less than the others' mean, and that mean is above
# the threshold (0.2).
tap_ok $(echo $means | awk '{ m = ($2 + $3 + $4) / 3; exit !($1 < m && m > 0.2) }'; echo $?) \
	"rank 0 waits in MPI calls less than the mean of ranks 1-3, which is > 0.2"
tap_eq "$(sed '/^hunch report: /,$d' "$TMP/rank0.out" | grep '^bn_mpi')" \
	"bn_mpi ranks=4 rounds=20 seconds=4
bn_mpi done" "rank 0 prints the job's usual output under its hunch"
tap_done
