# truth.sh - read a bottleneck target's .truth (tests/targets/README.md,
# "Truth files") for the end-to-end tests and bench/consultant.  Source
# it, then `truth_load FILE MODULE SECONDS`:
#   FINDINGS[0]  JSON [{hyp, where, below, thread, process}] of "why" lines (global
#                phase)
#   FINDINGS[1], FINDINGS[2]  the same for "phase 1" and "phase 2" lines
#   MAY          JSON [HYPOTHESIS...]; NONE 1 for a "none" line
#   ARGS         the "args" words, --seconds replaced by SECONDS
#   ANCESTORS    JSON {HYPOTHESIS: [ancestors on the why axis]}
#   TRUTH_BAD    the first line that is not a truth statement, if any
# <module> in a where path becomes MODULE.  A process NAME stays a name:
# `truth_processes FILE` then makes it the pid the target printed on
# stderr (FILE) as "NAME pid <pid>".

truth_add() {  # truth_add PHASE HYP
	TRUTH_CUR=$1
	FINDINGS[$TRUTH_CUR]=$(jq -c --arg h "$2" '. + [{hyp: $h, where: [],
		below: [], above: [], thread: null, process: null}]' \
		<<< "${FINDINGS[$TRUTH_CUR]}")
}

truth_edit() {  # truth_edit JQ-EXPR VALUE: change the last finding
	FINDINGS[$TRUTH_CUR]=$(jq -c --arg v "$2" ".[-1] |= ($1)" \
		<<< "${FINDINGS[$TRUTH_CUR]}")
}

truth_load() {  # truth_load FILE MODULE SECONDS
	local word rest i
	declare -gA FINDINGS=([0]='[]' [1]='[]' [2]='[]')
	# CPUstarved is the machine's load, not a planted bottleneck: the
	# suite's other tests can starve any busy target.
	MAY='["CPUstarved"]' NONE=0 ARGS=() TRUTH_BAD= TRUTH_CUR=0
	while read -r word rest; do
		case $word in
		''|'#'*) ;;
		args) read -ra ARGS <<< "$rest" ;;
		why) truth_add 0 "$rest" ;;
		phase) truth_add "${rest%% *}" "${rest#* }" ;;
		where) truth_edit '.where += [$v]' "${rest//<module>/$2}" ;;
		below) truth_edit '.below += [$v]' "${rest//<module>/$2}" ;;
		above) truth_edit '.above += [$v]' "${rest//<module>/$2}" ;;
		thread) truth_edit '.thread = $v' "$rest" ;;
		process) truth_edit '.process = $v' "$rest" ;;
		may) MAY=$(jq -c --arg h "$rest" '. + [$h]' <<< "$MAY") ;;
		none) NONE=1 ;;
		*) [ -z "$TRUTH_BAD" ] && TRUTH_BAD="$word $rest" ;;
		esac
	done < "$1"
	# The run's length replaces the truth's --seconds (same meaning).
	for i in "${!ARGS[@]}"; do
		[[ ${ARGS[$i]} == --seconds ]] && ARGS[$((i + 1))]=$3
	done
	# A bottleneck of an ancestor of the finding's hypothesis
	# (ExcessiveIOBlockingTime for TooManySmallIOOps) is the same
	# finding, less refined.
	ANCESTORS=$(jq -c '.hypotheses | . as $h | with_entries(.value =
		[.key | recurse($h[.].parent // empty)] [1:])' \
		"$HUNCH_SOURCE_ROOT/hypotheses/default.json")
}

truth_processes() {  # truth_processes STDERR-FILE
	local pids i
	pids=$(sed -n 's/^\([a-z][a-z0-9_]*\) pid \([0-9]*\)$/\1\t\2/p' "$1" |
		jq -R -s -c 'split("\n") | map(select(length > 0) |
			split("\t") | {key: .[0], value: .[1]}) | from_entries')
	for i in 0 1 2; do
		FINDINGS[$i]=$(jq -c --argjson p "$pids" 'map(.process |=
			(if . == null then null else ($p[.] // "none") end))' \
			<<< "${FINDINGS[$i]}")
	done
}
