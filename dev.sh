#!/bin/bash
# dev.sh - set up, build and run hunch on a Debian 12 machine.
#
#   ./dev.sh demo    install what is missing, build, hunt the demo's
#                    bottlenecks (hunch --batch; extra arguments go to hunch)
#   ./dev.sh test    install what is missing, build, run the whole test suite
#   ./dev.sh bench   install what is missing, build, run the benchmarks
#   ./dev.sh build   install what is missing and build only
#
# Safe to run again: packages are installed only when missing, and the
# build directory is configured once and then rebuilt incrementally.
# With CI set, warnings are errors and the build goes to build-ci/.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(gcc g++ clang make meson ninja-build pkg-config python3 binutils
	libelf-dev libdw-dev libcapstone-dev libjansson-dev libncurses-dev
	libc6-dbg tmux procps file coreutils
	python3.11 sqlite3 lua5.4 zstd gzip
	liblzma-dev        # MiniDebugInfo (.gnu_debugdata) is xz-compressed
	xz-utils           # xz, to build the MiniDebugInfo test fixture
	libdebuginfod-dev  # fetching debug files by build-id
	debuginfod         # the server the debuginfod test fetches from
	linux-perf         # the baseline the tests hunting shipped programs compare with
	jq                 # the tests read reports and journals with it
	scdoc              # builds the man page hunch(1) from docs/man/hunch.1.scd
	bash-completion    # where hunch's bash completion installs, and its test
	man-db             # man -l, to check the built page renders
	libclang-rt-14-dev  # libFuzzer, for the journal reader's fuzz test
	openmpi-bin libopenmpi-dev)  # mpirun and mpicc: the MPI target and its test
BENCH_PACKAGES=(libllvm14 uftrace bpftrace)

install_missing() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "dev.sh: missing Debian packages: ${missing[*]}" >&2
		echo "dev.sh: run this script as root, or: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	echo "dev.sh: installing ${missing[*]}" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
}

BUILD=build
MESON_OPTS=()
if [ -n "${CI:-}" ]; then
	BUILD=build-ci
	MESON_OPTS+=(-Dwerror=true)
fi

build() {
	install_missing "${PACKAGES[@]}"
	if [ ! -f "$BUILD/build.ninja" ]; then
		meson setup "$BUILD" "${MESON_OPTS[@]}" >/dev/null
	fi
	ninja -C "$BUILD" >/dev/null || ninja -C "$BUILD"
}

run_tests() {
	local rc=0
	# A log left by an earlier run must not be counted if this one
	# cannot write its own.
	rm -f "$BUILD/meson-logs/testlog.json"
	# Tests run one at a time: several of them measure time, and the
	# machine has two cores.
	meson test -C "$BUILD" --no-rebuild --num-processes 1 \
		--print-errorlogs "$@" >"$BUILD/test-output.txt" 2>&1 || rc=$?
	grep -E '^ *[0-9]+/[0-9]+ ' "$BUILD/test-output.txt" || true
	python3 tests/count-tap.py "$BUILD/meson-logs/testlog.json" || rc=1
	return $rc
}

case "${1:-demo}" in
demo)  build; shift || true
       # hunch's main job: a batch hunt of the bundled demo.  Arguments,
       # if any, replace --batch (e.g. ./dev.sh demo run -- ./myprog).
       [ $# -eq 0 ] && set -- --batch
       exec "$BUILD/hunch" "$@" ;;
test)  # A failed build is a failed run, counted on the last line like
       # every other failure (CI reads only that line).  "if !" runs
       # build without errexit, so its last command's status decides.
       if ! (build); then
	       echo "FAILED build: ./dev.sh build failed (see above)"
	       echo "0 passed, 1 failed"
	       exit 1
       fi
       shift; run_tests "$@" ;;
bench) install_missing "${BENCH_PACKAGES[@]}"; build; shift
       exec bench/run-all.sh "$BUILD" "$@" ;;
build) build ;;
*)     sed -n '2,12p' "$0" >&2; exit 1 ;;
esac
