#!/bin/bash
# test-install.sh - `meson install` gives a hunch that finds its own
# runtime library and demo, even installed under a DESTDIR (relocated).
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
tap_done
