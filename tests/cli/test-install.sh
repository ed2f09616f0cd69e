#!/bin/bash
# test-install.sh - `meson install` gives a hunch that finds its own
# runtime library and demo, even installed under a DESTDIR (relocated);
# with its man page and bash completion; and the install tree moved
# elsewhere still works in a clean environment: check, the demo in batch
# mode, and replay of the journal it wrote.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
DEST=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$DEST"' EXIT

meson install -C "$HUNCH_BUILD_ROOT" --destdir "$DEST" --no-rebuild \
	--quiet >/dev/null 2>&1
tap_eq "$?" 0 "meson install into a DESTDIR succeeds"
bin=$(find "$DEST" -path '*/bin/hunch' -type f)
rt=$(find "$DEST" -name libhunchrt.so -type f)
demo=$(find "$DEST" -path '*/bin/hunch-demo' -type f)
tap_ok $([ -x "$bin" ]; echo $?) "hunch is installed ($bin)"
tap_ok $([ -f "$rt" ]; echo $?) "libhunchrt.so is installed ($rt)"
tap_ok $([ -x "$demo" ]; echo $?) "hunch-demo is installed ($demo)"

# The installed hunch loads the installed runtime library.
T=$TARGETS_DIR/threads-O2-pie
"$T" --threads 2 --wait-file "$DEST/wf" >/dev/null 2>"$DEST/t.err" &
tpid=$!
for ((i = 0; i < 1000; i++)); do grep -qx ready "$DEST/t.err" && break; sleep 0.01; done
"$bin" attach "$tpid" 2>"$DEST/a.err"
tap_eq "$?" 0 "the installed hunch attaches"
tap_ok $(grep -qF "$rt" "/proc/$tpid/maps"; echo $?) \
	"and loads the installed runtime library, not the build tree's"
touch "$DEST/wf"; wait "$tpid"
tap_eq "$?" 0 "the program then finishes normally"

"$bin" >"$DEST/demo.out" 2>"$DEST/demo.err"
tap_eq "$?" 0 "the installed hunch runs the installed demo with no arguments"
tap_ok $(grep -qF "$demo" "$DEST/demo.err"; echo $?) "it names the installed demo"
man1=$(find "$DEST" -path '*/man1/hunch.1' -type f)
tap_ok $([ -f "$man1" ] && MANWIDTH=80 man -l "$man1" 2>/dev/null | grep -q '^NAME'; echo $?) \
	"the man page is installed and renders ($man1)"
comp=$(find "$DEST" -path '*/bash-completion/completions/hunch' -type f)
tap_ok $([ -f "$comp" ] && bash -n "$comp"; echo $?) "the bash completion is installed ($comp)"

# The whole tree moved elsewhere, run with a clean environment: nothing
# may come from the build tree, the original prefix or the variables.
prefix=${bin%/bin/hunch}
mv "$prefix" "$DEST/moved"
mbin=$DEST/moved/bin/hunch
clean() { env -i PATH=/usr/bin:/bin HOME="$DEST/home" "$@"; }
out=$(clean "$mbin" check 2>&1)
tap_eq "$?" 0 "moved: hunch check passes"
case $out in "$DEST/moved/"*"/hypotheses/default.json: ok ("*) s=0;; *) s=1;; esac
tap_ok $s "moved: the shipped hypotheses are the moved copy's ($out)"
clean "$mbin" --batch --journal "$DEST/demo.jsonl" >"$DEST/m.out" 2>"$DEST/m.err"
rc=$?
tap_ok $([ $rc -eq 0 ] || [ $rc -eq 3 ]; echo $?) "moved: hunch --batch hunts the demo (exit $rc)"
tap_ok $(grep -qF "$DEST/moved/bin/hunch-demo" "$DEST/m.err"; echo $?) "moved: it runs the moved demo"
tap_ok $(grep -q '^hunch report: ' "$DEST/m.out"; echo $?) "moved: and prints the report"
clean "$mbin" replay --batch "$DEST/demo.jsonl" >"$DEST/r.out" 2>/dev/null
tap_eq "$?" "$rc" "moved: replay of its journal exits as the search did"
cmp -s "$DEST/m.out" "$DEST/r.out" 2>/dev/null ||
	diff <(sed -n '/^hunch report/,$p' "$DEST/m.out") "$DEST/r.out" >/dev/null
tap_ok $? "moved: the replayed report is the live one"
tap_done
