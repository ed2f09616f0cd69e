#!/bin/bash
# test-house.sh - the house rules a reader relies on, checked on the
# source tree: every product folder's README names exactly the files it
# holds (readme_files.py), the tests README lists every tests/ folder,
# only the fault module (engine/eng_fault.c) reads a HUNCH_TEST_*
# variable, no product file, README or document cites an issue
# number (the code says what it does, not how it was planned), and, read
# with nm from the build (exports.py), every exported function is called
# by something and starts with its file's name.
. "$(dirname "$0")/../lib.sh"
root=${HUNCH_SOURCE_ROOT:?HUNCH_SOURCE_ROOT: the source tree}
build=${HUNCH_BUILD_ROOT:?HUNCH_BUILD_ROOT: the build tree}
cd "$root" || exit 1
product="arch engine rtlib consultant tui common"

for f in arch/x86_64 engine rtlib consultant tui common; do
	tap_eq "$(python3 tests/house/readme_files.py "$root" "$f")" \
		"unnamed: none
absent: none" "$f/README.md names every .c and .h of $f/, and no other"
done

missing=
for d in tests/*/; do
	d=$(basename "$d")
	grep -qE "^\| \`$d/\` \|" tests/README.md || missing="$missing $d"
done
tap_eq "${missing:- none}" " none" "tests/README.md has a row for every tests/ folder"

tap_eq "$(grep -rlE 'getenv\("HUNCH_TEST_' $product | sort)" \
	"engine/eng_fault.c" "only engine/eng_fault.c reads a HUNCH_TEST_* variable"

tap_eq "$(grep -rniE 'issue ?#?[0-9]+' $product docs README.md \
	--include='*.[ch]' --include='*.md' --include='*.build' \
	--include='*.scd' --include='*.json'; \
	grep -rniE 'issue ?#?[0-9]+' tests --include='README.md')" "" \
	"no product file, README or document cites an issue number"

exports=$(python3 tests/house/exports.py "$build" "$root")
tap_eq "$(echo "$exports" | grep '^dead:')" "dead: none" \
	"every exported function is called by something (tests count)"
tap_eq "$(echo "$exports" | grep '^misnamed:')" "misnamed: none" \
	"every exported function starts with its file's name"
tap_done
