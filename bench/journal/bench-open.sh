#!/bin/bash
# bench-open.sh - how long the replay dashboard takes to show its first
# screen, and then `e` (the end), on real terminals (tmux), for one or
# more hunch binaries on the same journals, in the same run.
#
#   bench/journal/bench-open.sh [-n RUNS] JOURNAL... -- HUNCH...
#
# Times are from the command typed to the screen showing it (polled
# every 20 ms): "open" until the status line says `paused`, "e" from the
# key until it says `end`.  Each (binary, journal) is run RUNS times
# (default 3), interleaved, and the median printed.  The journals should
# have their header's hypotheses set to null (the synthetic journal's own
# document is not a loadable one): see README.md.
set -u
RUNS=3
if [ "${1:-}" = -n ]; then RUNS=$2; shift 2; fi
JOURNALS=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do JOURNALS+=("$1"); shift; done
shift
BINS=("$@")
[ ${#JOURNALS[@]} -gt 0 ] && [ ${#BINS[@]} -gt 0 ] ||
	{ echo "usage: $0 [-n RUNS] JOURNAL... -- HUNCH..." >&2; exit 2; }

TMP=$(mktemp -d)
SOCK=bench-open-$$
printf 'set -g default-terminal tmux-256color\nset -s exit-empty off\n' >"$TMP/tmux.conf"
TM() { tmux -L "$SOCK" -f "$TMP/tmux.conf" "$@"; }
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# until SCREEN matches ERE (120 s at most): the milliseconds since $1
wait_ms() {
	local t0=$1 re=$2 i
	for ((i = 0; i < 6000; i++)); do
		TM capture-pane -p -t b | head -1 | grep -Eq -- "$re" &&
			{ echo $(( $(now_ms) - t0 )); return 0; }
		sleep 0.02
	done
	echo timeout
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

one() {  # one BIN JOURNAL: "open_ms e_ms"
	local t0 open e
	TM new-session -d -s b -x 80 -y 24 "env PS1='b\$ ' bash --norc --noprofile"
	sleep 0.3
	t0=$(now_ms)
	TM send-keys -t b -l "$1 replay $2"; TM send-keys -t b Enter
	open=$(wait_ms "$t0" ' paused ')
	t0=$(now_ms)
	TM send-keys -t b e
	e=$(wait_ms "$t0" ' end ')
	TM send-keys -t b q
	sleep 0.2
	TM kill-session -t b
	echo "$open $e"
}

echo "| journal | hunch | open (first screen), median of $RUNS | \`e\` (play to the end), median |"
echo "|---|---|---|---|"
for j in "${JOURNALS[@]}"; do
	for b in "${BINS[@]}"; do : >"$TMP/$(basename "$b").$(basename "$j")"; done
	for ((r = 0; r < RUNS; r++)); do
		for b in "${BINS[@]}"; do
			one "$b" "$j" >>"$TMP/$(basename "$b").$(basename "$j")"
		done
	done
	for b in "${BINS[@]}"; do
		f="$TMP/$(basename "$b").$(basename "$j")"
		echo "| $(basename "$j") ($(du -m "$j" | cut -f1) MB) | $b | $(cut -d' ' -f1 "$f" | median) ms ($(cut -d' ' -f1 "$f" | tr '\n' ' ')) | $(cut -d' ' -f2 "$f" | median) ms ($(cut -d' ' -f2 "$f" | tr '\n' ' ')) |"
	done
done
