#!/bin/bash
# test-make.sh - `make -j2` as a user runs it, under hunch: Debian's make
# runs gcc, which runs cc1 and as, each for a fraction of a second, a
# hundred processes that start and end between two of hunch's readings.
# The job's CPU counts them (the kernel adds a reaped process's CPU time
# to its parent's): CPUbound on the whole job reads the CPUs the build
# used, as the shell's `times` measures them in the same run, and the
# finding says it of the job's processes.  The build's output is the
# same as without hunch.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d -p "$HUNCH_BUILD_ROOT" e2e-make.XXXXXX)
trap '[ -n "${E2E_KEEP:-}" ] && echo "# kept $TMP" || rm -rf "$TMP"' EXIT
export TMPDIR=$TMP XDG_STATE_HOME=$TMP/state
NCPU=$(nproc)

# 48 translation units of real C (a hunch source that needs only libc
# and jansson headers), compiled -O2: 4-8 s on 2 CPUs.
src=$HUNCH_SOURCE_ROOT/consultant/pc_findings.c
mkdir -p "$TMP/b"
for i in $(seq 1 48); do cp "$src" "$TMP/b/f$i.c"; done
cat > "$TMP/b/Makefile" <<EOF
OBJS=\$(patsubst %.c,%.o,\$(wildcard f*.c))
all: \$(OBJS)
%.o: %.c
	@gcc -O2 -I$HUNCH_SOURCE_ROOT/consultant -I$HUNCH_SOURCE_ROOT/common \\
	-I$HUNCH_SOURCE_ROOT/engine -I$HUNCH_SOURCE_ROOT/arch -c \$< -o \$@
EOF
# the shell's `times` after the build: its children's user and system
# time, the job's CPU; `date` around it, the wall time
cat > "$TMP/build.sh" <<'EOF'
t0=$(date +%s.%N)
make -s -j2 -C "$1" && echo built
t1=$(date +%s.%N)
echo "wall $t0 $t1" >&2
times >&2
EOF
"$HUNCH" run --batch --journal "$TMP/j.jsonl" --report "$TMP/live.json" -- \
	bash "$TMP/build.sh" "$TMP/b" > "$TMP/live.out" 2> "$TMP/live.err"
rc=$?
tap_ok $([ $rc -eq 0 ] || [ $rc -eq 3 ]; echo $?) "hunch run --batch exits 0 (or 3: incomplete) ($rc)"
tap_eq "$(sed '/^hunch report: /,$d' "$TMP/live.out")" "built" "the build's output"
tap_eq "$(ls "$TMP"/b/*.o | wc -l)" 48 "the 48 objects are built"
n=$(jq '.processes | length' "$TMP/live.json")
tap_ok $([ "$n" -ge 100 ]; echo $?) "the job's processes are followed: make, gcc, cc1, as ($n)"
# the CPU the build used: the children's user + system time over the wall
cpu=$(awk '/^wall / {w = $3 - $2} /^[0-9]+m[0-9.]+s [0-9]+m[0-9.]+s$/ {
	split($1, u, "m"); split($2, s, "m");
	c = u[1] * 60 + u[2] + s[1] * 60 + s[2]} END {printf "%.3f", c / w}' \
	"$TMP/live.err")
got=$(jq '[.phases[0].nodes[] | select(.hypothesis == "CPUbound" and
	.focus == ["/Code", "/Process", "/SyncObject", "/Files"]) | .value][0]' \
	"$TMP/live.json")
tap_diag "the build used $cpu CPUs (times, over the wall time); hunch read $got on the whole job"
tap_ok $(echo "$got >= 0.7 * $cpu && $got <= $NCPU + 0.05" | bc -l | grep -qx 1; echo $?) \
	"CPUbound on the whole job reads the CPUs the build used: $got, at least 70% of $cpu and at most $NCPU"
tap_ok $(jq -e '.findings[0] | (.hypothesis == "CPUbound" or .hypothesis ==
	"CPUdemand") and (.text | startswith("the job'"'"'s "))' "$TMP/live.json" \
	> /dev/null; echo $?) "the leading finding is the job's CPU: $(jq -r '.findings[0].text' "$TMP/live.json")"
"$HUNCH" replay --batch "$TMP/j.jsonl" > "$TMP/replay.out" 2>/dev/null
tap_eq "$(sed -n '/^hunch report: /,$p' "$TMP/replay.out")" \
	"$(sed -n '/^hunch report: /,$p' "$TMP/live.out")" "the replay prints the same report"
tap_done
