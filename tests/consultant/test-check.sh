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
case "$(echo "$out" | head -1)" in *": ok (10 hypotheses, 13 metrics, 28 tunables)") s=0;; *) s=1;; esac
tap_ok $s "check says what it loaded: $(echo "$out" | head -1)"
tap_eq "$(echo "$out" | sed -n 2p)" "loaded: $(echo "$out" | head -1 | sed 's/: ok (.*//')" "the one file loaded"
tap_eq "$(echo "$out" | sed -n 3p)" "the shipped defaults, unchanged" "and nothing differs from them"

err=$("$HUNCH" check "$BAD/missing_parent.json" 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 1 "a broken file: exit 1"
tap_eq "$(echo "$err" | head -1)" "$BAD/missing_parent.json:5:7: \$.hypotheses.SlowDisk.parent: missing parent: hypothesis \"SlowDisk\" names parent \"ExcessiveIOBlockingTim\", which is not defined (did you mean \"ExcessiveIOBlockingTime\"?)" "the positioned message"
tap_eq "$(echo "$err" | tail -1)" "$BAD/missing_parent.json: invalid" "and the verdict"

"$HUNCH" check "$BAD/cycle.json" "$BAD/syntax.json" >/dev/null 2>"$TMP/two"; rc=$?
tap_eq "$rc" 1 "two broken files: exit 1"
tap_eq "$(grep -c ': invalid$' "$TMP/two")" 2 "both reported"

err=$("$HUNCH" check "$BAD" 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 1 "a directory: exit 1"
tap_eq "$(echo "$err" | head -1)" "cannot read hypotheses file $BAD: it is a directory; name a .json file in it" "a directory is named as one, not as a syntax error"

mkdir -p "$XDG_CONFIG_HOME/hunch"
cat > "$XDG_CONFIG_HOME/hunch/hypotheses.json" <<'JSON'
{ "version": 1,
  "hypotheses": { "HotSpin": { "parent": "CPUbound", "metric": "cpu_inclusive",
                               "threshold": "PC_CPUThreshold" } },
  "set": { "PC_CPUThreshold": 0.4 } }
JSON
out=$("$HUNCH" check --list 2>&1); rc=$?
tap_eq "$rc" 0 "defaults + the XDG user file"
case "$out" in *": ok (11 hypotheses,"*) s=0;; *) s=1;; esac
tap_ok $s "the user file's hypothesis is added"
tap_eq "$(echo "$out" | grep '^PC_CPUThreshold' | awk '{print $2}')" 0.4 "its \"set\" applies"
out=$("$HUNCH" check --set costLimit=0.1 2>&1)
tap_eq "$(echo "$out" | sed -n '2p' | sed 's/^loaded: .*, //')" "$XDG_CONFIG_HOME/hunch/hypotheses.json" "the XDG file is listed as loaded"
tap_eq "$(echo "$out" | sed -n '3,$p')" "differs from the shipped defaults in 3 places:
  tunable costLimit = 0.1 (shipped: 0.05)
  tunable PC_CPUThreshold = 0.4 (shipped: 0.3)
  hypothesis HotSpin: new, defined in $XDG_CONFIG_HOME/hunch/hypotheses.json:2" "every value that differs from the shipped defaults, and where"

echo '{ "version": 1, "set": { "costLimit": 0 } }' > "$XDG_CONFIG_HOME/hunch/hypotheses.json"
err=$("$HUNCH" check 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 1 "a broken XDG file fails the check"
tap_eq "$(echo "$err" | head -1)" "$XDG_CONFIG_HOME/hunch/hypotheses.json:1:26: \$.set.costLimit: tunable costLimit = 0 is out of its range [0.001, 1]" "and names the XDG file"
rm "$XDG_CONFIG_HOME/hunch/hypotheses.json"

echo '{ "version": 1, "tunables": { "costLimit": { "default": 0.1 } } }' > "$TMP/ov.json"
err=$("$HUNCH" check "$TMP/ov.json" 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 1 "an overlay giving a known tunable only a default: exit 1"
tap_eq "$(echo "$err" | head -1)" "$TMP/ov.json:1:31: \$.tunables.costLimit: tunable costLimit is already defined: to change its value, write \"set\": { \"costLimit\": VALUE } at the top level (redefining it needs type, default, min, max and description)" "and the error points to \"set\""

err=$("$HUNCH" check --set maxPendingEnables=0 2>&1 >/dev/null); rc=$?
tap_eq "$rc" 1 "--set out of range: exit 1"
tap_eq "$(echo "$err" | head -1)" "hunch: --set: tunable maxPendingEnables = 0 is out of its range [1, 1000]" "--set message"
"$HUNCH" check --set sufficientTime=3 >/dev/null 2>&1
tap_eq "$?" 0 "--set in range: exit 0"
tap_done
