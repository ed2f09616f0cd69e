#!/bin/bash
# bench/run-all.sh BUILD_DIR [NAME...] - run the benchmarks (meson
# benchmark() entries), one at a time so that they do not disturb each
# other, and show their tables.  `./dev.sh bench` calls this.
set -euo pipefail
BUILD=${1:-build}
shift || true
exec meson test -C "$BUILD" --benchmark --num-processes 1 --verbose "$@"
