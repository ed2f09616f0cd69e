#!/bin/bash
# test-longfocus.sh - the Search pane's last rows show the cursor node's
# full name however long its focus: a real search of bn_cpu_deep copied
# under an 83-character file name (so every /Code focus below the whole
# program is wider than 80 columns), replayed in the dashboard at 80x24.
# The name wraps over the rows just above the log strip, whole, and no
# line of the screen is wider than the terminal; so does the Where pane's
# path of a function in that module.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
SOCK=hunch-longfocus-$$
export LC_ALL=C.UTF-8  # ${#line} counts characters, not bytes
. "$HUNCH_SOURCE_ROOT/tests/tui/tmux-lib.sh"
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT

LONG=a_program_whose_file_name_is_long_enough_to_overflow_the_search_pane_at_80_columns
cp "$TARGETS_DIR/bn_cpu_deep-O2-pie" "$TMP/$LONG"
(cd "$TMP" && "$HUNCH" run --batch --time-limit 20 --kill-at-end \
	--journal "$TMP/j.jsonl" -- "./$LONG" >"$TMP/report.txt" 2>/dev/null)
rc=$?
tap_ok $([ "$rc" = 0 ] || [ "$rc" = 3 ]; echo $?) \
	"the search of bn_cpu_deep under a long name ends (exit $rc)"
tap_ok $(grep -q "^    where: /Code/$LONG/bn_cpu_deep.c/" "$TMP/report.txt"; echo $?) \
	"it refines CPU time into the long-named module's code"

# The rows between the Search pane's last tree row and the log strip:
# the cursor node's name (tree rows start with a space; the name does not).
name_rows() {
	screen "$1" | sed -n '/^ Global search:/,/^ 6 Log /p' | sed '1d;$d' |
		awk '/^ / || /^$/ { rows = ""; next } { rows = rows $0 "\n" }
		     END { printf "%s", rows }'
}

new_term s 80 24
type_in s "cd $TMP && $HUNCH replay j.jsonl"
check_screen s '^ a_progra[^ ]* +pid [0-9]+ +paused' "the replay dashboard opens"
keys s '$'
check_screen s '^ a_progra[^ ]* +pid [0-9]+ +end ' "\$: at the journal's end"
keys s 1
check_screen s '^ Global search: ' "1: the Search pane"
re="^[A-Za-z]+</Code/$LONG/"
for ((i = 0; i < 40; i++)); do
	before=$(screen s)
	name_rows s | tr -d '\n' | grep -Eq -- "$re" && break
	keys s j
	for ((t = 0; t < 60; t++)); do sleep 0.05; [ "$(screen s)" != "$before" ] && break; done
done
rows=$(name_rows s)
full=$(tr -d '\n' <<< "$rows")
tap_ok $(grep -Eq -- "$re" <<< "$full"; echo $?) \
	"j: the cursor reaches a node in the long-named module: $full"
tap_ok $(grep -Eq -- '^[A-Za-z]+</Code/[^,]+,/Process[^,]*,/SyncObject,/Files>$' <<< "$full"; echo $?) \
	"its name is there whole, to the closing '>' (${#full} columns)"
n=$(grep -c '' <<< "$rows")
tap_ok $([ "$n" -ge 2 ]; echo $?) "it wraps: $n rows"
short=$(head -n -1 <<< "$rows" | awk 'length($0) < 40 || length($0) > 80' | wc -l)
tap_eq "$short" 0 "every row but the last breaks in its second half (after ',' or '/') or at 80 columns"
tap_ok $(screen s | grep -q "^ 6 Log "; echo $?) "the log strip is still under it"
wide=0
while IFS= read -r line; do
	[ "${#line}" -le 80 ] || wide=$((wide + 1))
done < <(screen s)
tap_eq "$wide" 0 "no line wider than 80 columns"
keys s k
for ((t = 0; t < 60; t++)); do sleep 0.05; [ "$(name_rows s | tr -d '\n')" != "$full" ] && break; done
tap_ok $(name_rows s | tr -d '\n' | grep -Eq '^[A-Za-z]+<.*/Files>$'; echo $?) \
	"k: the node above, its name whole too: $(name_rows s | tr -d '\n')"

# The Where pane's last rows, the cursor resource's path, wrap the same way.
where_rows() {
	screen "$1" | sed -n '/\[2 Where\]/,/^ 6 Log /p' | sed '1d;$d' |
		awk '/^ / || /^$/ { rows = ""; next } { rows = rows $0 "\n" }
		     END { printf "%s", rows }'
}
keys s 2
check_screen s '\[2 Where\]' "2: the Where pane"
re="^/Code/$LONG/bn_cpu_deep\.c/[a-z_]+  \[function at 0x[0-9a-f]+\]$"
for ((i = 0; i < 40; i++)); do
	before=$(screen s)
	where_rows s | tr -d '\n' | grep -Eq -- "$re" && break
	keys s j
	for ((t = 0; t < 60; t++)); do sleep 0.05; [ "$(screen s)" != "$before" ] && break; done
done
rows=$(where_rows s)
tap_ok $(tr -d '\n' <<< "$rows" | grep -Eq -- "$re"; echo $?) \
	"where: j to a function of the long-named module: its path whole: $(tr -d '\n' <<< "$rows")"
tap_eq "$(grep -c '' <<< "$rows")" 2 "where: over two rows"
wide=0
while IFS= read -r line; do
	[ "${#line}" -le 80 ] || wide=$((wide + 1))
done < <(screen s)
tap_eq "$wide" 0 "where: no line wider than 80 columns"
keys s q
tap_done
