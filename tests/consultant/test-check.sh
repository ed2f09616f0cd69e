#!/bin/bash
# test-check.sh - `hunch check`: validates without running anything;
# exit 0 valid, 1 invalid; every message positioned; the XDG user file
# extends the defaults; --set is range-checked.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
BAD="$HUNCH_SOURCE_ROOT/tests/consultant/bad"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XDG_CONFIG_HOME="$TMP/xdg"

out=$("$HUNCH" check 2>&1); rc=$?
tap_eq "$rc" 0 "the shipped defaults are valid"
case "$out" in *": ok (7 hypotheses, 11 metrics, 20 tunables)") s=0;; *) s=1;; esac
tap_ok $s "check says what it loaded: $out"

err=$("$HUNCH" check "$BAD/missing_parent.json" 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 1 "a broken file: exit 1"
tap_eq "$(echo "$err" | head -1)" "$BAD/missing_parent.json:5:7: \$.hypotheses.SlowDisk.parent: missing parent: hypothesis \"SlowDisk\" names parent \"ExcessiveIOBlockingTim\", which is not defined (did you mean \"ExcessiveIOBlockingTime\"?)" "the positioned message"
tap_eq "$(echo "$err" | tail -1)" "$BAD/missing_parent.json: invalid" "and the verdict"

"$HUNCH" check "$BAD/cycle.json" "$BAD/syntax.json" >/dev/null 2>"$TMP/two"; rc=$?
tap_eq "$rc" 1 "two broken files: exit 1"
tap_eq "$(grep -c ': invalid$' "$TMP/two")" 2 "both reported"

mkdir -p "$XDG_CONFIG_HOME/hunch"
cat > "$XDG_CONFIG_HOME/hunch/hypotheses.json" <<'JSON'
{ "version": 1,
  "hypotheses": { "HotSpin": { "parent": "CPUbound", "metric": "cpu_inclusive",
                               "threshold": "PC_CPUThreshold" } },
  "set": { "PC_CPUThreshold": 0.4 } }
JSON
out=$("$HUNCH" check --list 2>&1); rc=$?
tap_eq "$rc" 0 "defaults + the XDG user file"
case "$out" in *": ok (8 hypotheses,"*) s=0;; *) s=1;; esac
tap_ok $s "the user file's hypothesis is added"
tap_eq "$(echo "$out" | grep '^PC_CPUThreshold' | awk '{print $2}')" 0.4 "its \"set\" applies"

echo '{ "version": 1, "set": { "costLimit": 0 } }' > "$XDG_CONFIG_HOME/hunch/hypotheses.json"
err=$("$HUNCH" check 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 1 "a broken XDG file fails the check"
tap_eq "$(echo "$err" | head -1)" "$XDG_CONFIG_HOME/hunch/hypotheses.json:1:26: \$.set.costLimit: tunable costLimit = 0 is out of its range [0.001, 1]" "and names the XDG file"
rm "$XDG_CONFIG_HOME/hunch/hypotheses.json"

err=$("$HUNCH" check --set maxPendingEnables=0 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 1 "--set out of range: exit 1"
tap_eq "$(echo "$err" | head -1)" "hunch: --set: tunable maxPendingEnables = 0 is out of its range [1, 1000]" "--set message"
"$HUNCH" check --set sufficientTime=3 >/dev/null 2>&1
tap_eq "$?" 0 "--set in range: exit 0"
tap_done
