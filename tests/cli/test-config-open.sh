#!/bin/bash
# test-config-open.sh - a search run under a user's hypotheses overlay
# says so: the text report's `hypotheses:` line lists every file loaded
# and every place the configuration differs from the shipped defaults,
# the JSON report's `configuration` the same, the journal header records
# it, and the replay reports it as recorded (plus its own --set).
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export XDG_CONFIG_HOME="$TMP/xdg"
T=$TARGETS_DIR/bn_onebusy-O2-pie
SHIPPED=$("$HUNCH" check | head -1 | sed 's/: ok (.*//')

run() {  # run OUT ARGS...: a 2-second batch search of bn_onebusy
	local out=$1; shift
	"$HUNCH" run --batch --time-limit 2 --kill-at-end --journal "$out.jsonl" \
		--report "$out.json" "$@" -- "$T" --seconds 30 >"$out.txt" 2>/dev/null
}

run "$TMP/plain"
tap_eq "$(grep '^hypotheses:' "$TMP/plain.txt")" "hypotheses: the shipped defaults ($SHIPPED)" \
	"defaults only: the report names the shipped file"
tap_eq "$(jq -c .configuration "$TMP/plain.json")" "{\"files\":[\"$SHIPPED\"],\"differs\":[]}" \
	"defaults only: JSON configuration, nothing differs"

mkdir -p "$XDG_CONFIG_HOME/hunch"
cat > "$XDG_CONFIG_HOME/hunch/hypotheses.json" <<'JSON'
{ "version": 1,
  "hypotheses": { "HotSpin": { "parent": "CPUbound", "metric": "cpu_inclusive",
                               "threshold": "PC_CPUThreshold" } },
  "set": { "PC_CPUThreshold": 0.4 } }
JSON
U=$XDG_CONFIG_HOME/hunch/hypotheses.json
run "$TMP/user" --set costLimit=0.1
tap_eq "$(sed -n '/^hypotheses:/,/^$/p' "$TMP/user.txt")" "hypotheses: $SHIPPED, $U (3 differences from the shipped defaults)
  tunable costLimit = 0.1 (shipped: 0.05)
  tunable PC_CPUThreshold = 0.4 (shipped: 0.3)
  hypothesis HotSpin: new, defined in $U:2" "the user's overlay and --set: every file and every difference in the text report"
tap_eq "$(jq -c '.configuration.files' "$TMP/user.json")" "[\"$SHIPPED\",\"$U\"]" \
	"JSON: the files loaded, in order"
tap_eq "$(jq '.configuration.differs | length' "$TMP/user.json")" 3 "JSON: the three differences"
tap_eq "$(head -1 "$TMP/user.jsonl" | jq -c .config)" "$(jq -c .configuration "$TMP/user.json")" \
	"the journal header records the same"
"$HUNCH" replay --batch "$TMP/user.jsonl" 2>/dev/null | sed -n '/^hypotheses:/,/^$/p' >"$TMP/rp.txt"
tap_eq "$(cat "$TMP/rp.txt")" "$(sed -n '/^hypotheses:/,/^$/p' "$TMP/user.txt")" \
	"the replay reports the recorded configuration"
"$HUNCH" replay --batch --set PC_CPUThreshold=0.5 "$TMP/user.jsonl" 2>/dev/null |
	sed -n '/^hypotheses:/,/^$/p' | tail -2 | head -1 >"$TMP/rs.txt"
tap_eq "$(cat "$TMP/rs.txt")" "  tunable PC_CPUThreshold=0.5 (replay --set)" \
	"a what-if replay adds its own --set"
tap_done
