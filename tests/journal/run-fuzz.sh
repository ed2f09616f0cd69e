#!/bin/sh
# run-fuzz.sh FUZZER CORPUS - a short libFuzzer run over the journal
# reader (TAP).  New inputs go to a scratch directory, never into the
# corpus kept in the repository.
fuzzer=$1 corpus=$2 runs=${FUZZ_RUNS:-20000}
if [ -z "$fuzzer" ] || [ ! -x "$fuzzer" ]; then
	echo "1..0 # SKIP no libFuzzer toolchain: install clang and libclang-rt-14-dev (./dev.sh does)"
	exit 0
fi
scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT
# libFuzzer always runs the empty input and does not count an empty file.
seeds=$(find "$corpus" -type f -size +0 | wc -l)
mkdir "$scratch/new" && "$fuzzer" -runs="$runs" -max_total_time=90 -max_len=65536 -timeout=10 \
	-rss_limit_mb=2048 -seed=6 "$scratch/new" "$corpus" >"$scratch/log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
	echo "ok 1 - $runs fuzzed inputs: no crash, leak, hang or undefined behaviour"
else
	echo "not ok 1 - the fuzzer found a problem (exit $rc):"
	grep -E 'ERROR|SUMMARY|Test unit written|==[0-9]+==' "$scratch/log" | head -20 | sed 's/^/# /'
fi
loaded=$(sed -n 's/.*INFO: seed corpus: files: \([0-9]*\).*/\1/p' "$scratch/log" | head -1)
if [ "$loaded" = "$seeds" ]; then
	echo "ok 2 - all $seeds seeds of the repository's corpus were run"
else
	echo "not ok 2 - seeds run: '$loaded', in the corpus: $seeds"
fi
echo "# $(grep -E '^Done|#[0-9]+ *DONE' "$scratch/log" | tail -1)"
echo "1..2"
