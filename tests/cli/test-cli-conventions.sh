#!/bin/bash
# test-cli-conventions.sh - hunch behaves like the tools people know:
# help at every level on stdout with exit 0, a version, unknown options
# and commands named with the nearest valid one, every option the parsers
# accept documented in the man page and in --help, and bash completion
# that offers commands, options and tunables.
. "$HUNCH_SOURCE_ROOT/tests/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SRC=$HUNCH_SOURCE_ROOT
MAN=$SRC/docs/man/hunch.1.scd

# --- help at every level ------------------------------------------------
help_ok() {  # help_ok NAME ARGS...: exit 0, usage on stdout, nothing on stderr
	local name=$1; shift
	"$HUNCH" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	tap_ok $([ $rc -eq 0 ] && [ ! -s "$TMP/err" ] &&
		 head -1 "$TMP/out" | grep -q '^usage: hunch'; echo $?) \
		"$name: exit 0 ($rc), usage on stdout, stderr empty"
}
help_ok "hunch --help" --help
help_ok "hunch -h" -h
help_ok "hunch help" help
cmp -s <("$HUNCH" --help) <("$HUNCH" help)
tap_ok $? "hunch help is hunch --help"
for c in run attach where check points replay; do
	help_ok "hunch $c --help" "$c" --help
	help_ok "hunch $c -h" "$c" -h
	cmp -s <("$HUNCH" "$c" --help) <("$HUNCH" help "$c")
	tap_ok $? "hunch help $c is hunch $c --help"
done
# a program's own --help is the program's, after its name
out=$("$HUNCH" run --batch --no-journal --kill-at-end --time-limit 1 -- \
	/bin/sh -c 'printf "%s\n" "$0"' --help 2>/dev/null | head -1)
tap_eq "$out" "--help" "hunch run PROG --help passes --help to PROG"
"$HUNCH" help frob >/dev/null 2>"$TMP/err"
tap_eq "$?:$(cat "$TMP/err")" "1:hunch help: no command 'frob'; the commands: run, attach, where, check, points, replay, help, version" \
	"hunch help of no command: exit 1, the commands listed"

# --- arguments shown as a shell reads them back -----------------------------
"$HUNCH" run --batch --time-limit 1 --kill-at-end --journal "$TMP/q.jsonl" -- \
	/bin/sh -c 'x=1
while :; do x=$((x+1)); done' 'it'"'"'s' plain >"$TMP/q.out" 2>/dev/null
tap_eq "$(grep '^hunch report: ' "$TMP/q.out" | sed 's/ (pid .*//')" \
	"hunch report: /bin/sh -c \$'x=1\\nwhile :; do x=\$((x+1)); done' \$'it\\'s' plain" \
	"a multi-line argument is one escaped word in the report's header"
"$HUNCH" replay --batch "$TMP/q.jsonl" 2>/dev/null | grep '^hunch report: ' >"$TMP/q.rp"
tap_eq "$(sed 's/ (pid .*//' "$TMP/q.rp")" "$(grep '^hunch report: ' "$TMP/q.out" | sed 's/ (pid .*//')" \
	"and the same in its replay"
eval "set -- $(sed -e 's/^hunch report: //' -e 's/ (pid .*//' "$TMP/q.rp")"
tap_eq "$#:$3" "5:x=1
while :; do x=\$((x+1)); done" "the shell reads the header's words back exactly"

# --- version --------------------------------------------------------------
v=$("$HUNCH" version)
tap_ok $(echo "$v" | grep -qE '^hunch [0-9]+\.[0-9]+\.[0-9]+$'; echo $?) "hunch version: $v"
tap_eq "$("$HUNCH" --version)" "$v" "hunch --version"
tap_eq "$("$HUNCH" -V)" "$v" "hunch -V"

# --- unknown options and commands ------------------------------------------
err_is() {  # err_is STATUS WANT NAME -- ARGS...
	local st=$1 want=$2 name=$3; shift 4
	"$HUNCH" "$@" >/dev/null 2>"$TMP/err"
	local rc=$?
	tap_eq "$rc:$(head -1 "$TMP/err")" "$st:$want" "$name"
}
err_is 1 "hunch run: unknown option '--kil-at-end'; did you mean '--kill-at-end'? (hunch run --help lists them)" \
	"run: a mistyped option and its nearest" -- run --kil-at-end /bin/true
err_is 1 "hunch replay: unknown option '--reprot'; did you mean '--report'? (hunch replay --help lists them)" \
	"replay: a mistyped option and its nearest" -- replay --reprot x.json j.jsonl
err_is 1 "hunch replay: unknown option '--frob' (hunch replay --help lists them)" \
	"replay: an unknown option named" -- replay --frob
err_is 1 "hunch check: unknown option '--lst'; did you mean '--list'? (hunch check --help lists them)" \
	"check: a mistyped option" -- check --lst
err_is 1 "hunch where: option '--pid' needs a value (hunch where --help)" \
	"where: an option without its value" -- where --pid
err_is 1 "hunch points: unknown option '-x' (hunch points --help lists them)" \
	"points: an unknown short option" -- points -x prog
err_is 1 "hunch: unknown option '--bogus' (hunch --help lists them)" \
	"the demo: an unknown option" -- --bogus
err_is 1 "hunch: 'verison' is not a hunch command; did you mean 'version'? (run, attach, where, check, points, replay, help, version); to run a program of that name: hunch run verison" \
	"a mistyped command is not taken for a program" -- verison
err_is 1 "hunch: 'ls' is not a hunch command (run, attach, where, check, points, replay, help, version); to run a program of that name: hunch run ls" \
	"a bare program name: the advice to use run" -- ls
cp /bin/true "$TMP/prog"
"$HUNCH" "$TMP/prog" >/dev/null 2>&1
tap_eq "$?" 0 "hunch PATH (an existing file) runs it"

# --- every option the parsers accept is documented -------------------------
# long options: the getopt tables ({ "name", ..._argument ...}) and the
# hand-written parsers' strcmp(..., "--name") in tui/cli_*.c
grep -ohE '\{ "[a-z][a-z-]*", (no|required|optional)_argument' "$SRC"/tui/cli_*.c |
	sed -E 's/\{ "([a-z-]+)".*/\1/' >"$TMP/opts"
grep -ohE '"--[a-z][a-z-]*[="]' "$SRC"/tui/cli_*.c | sed -E 's/"--([a-z-]+).*/\1/' >>"$TMP/opts"
sort -u "$TMP/opts" -o "$TMP/opts"
n=$(wc -l <"$TMP/opts")
tap_ok $([ "$n" -ge 25 ]; echo $?) "the parsers accept $n long options (at least 25 expected)"
for c in "" run attach where check points replay; do "$HUNCH" $c --help; done >"$TMP/help" 2>&1
undoc_man="" undoc_help=""
while read -r o; do
	grep -qF -- "*--$o*" "$MAN" || undoc_man+=" --$o"
	grep -qE -- "--$o([^a-z-]|\$)" "$TMP/help" || undoc_help+=" --$o"
done <"$TMP/opts"
tap_eq "${undoc_man:-none}" none "every accepted long option is in the man page ($MAN)"
tap_eq "${undoc_help:-none}" none "every accepted long option is in some --help"
# the man page builds and renders
if [ -f "$HUNCH_BUILD_ROOT/docs/man/hunch.1" ]; then
	MANWIDTH=80 man -l "$HUNCH_BUILD_ROOT/docs/man/hunch.1" >"$TMP/man.txt" 2>/dev/null
	tap_ok $(grep -q '^NAME' "$TMP/man.txt" && grep -q 'hunch - find why and where' "$TMP/man.txt"; echo $?) \
		"man -l hunch.1 renders its NAME section"
else
	tap_ok 1 "hunch.1 is built (scdoc is installed by dev.sh)"
fi

# --- bash completion --------------------------------------------------------
BC=/usr/share/bash-completion/bash_completion
complete_words() {  # complete_words WORD...: what _hunch offers for the last
	bash -c '. "$1"; . "$2"; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_hunch hunch "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BC" "$SRC/completion/hunch.bash" "$@" |
		sort | tr '\n' ' ' | sed 's/ $//'
}
if [ -f "$BC" ]; then
	export PATH="$(dirname "$HUNCH"):$PATH"
	tap_eq "$(complete_words hunch re)" "replay" "completion: a command"
	tap_eq "$(complete_words hunch run --kill)" "--kill-at-end" "completion: an option of run"
	tap_eq "$(complete_words hunch replay --export-)" \
		"--export-csv --export-dot --export-shg-json --export-where-json" "completion: replay's options"
	tap_eq "$(complete_words hunch run --set costL)" "costLimit=" \
		"completion: a tunable's name after --set (from hunch check --list)"
	tap_eq "$(complete_words hunch where --hierarchy S)" "SyncObject" "completion: a hierarchy"
	mkdir "$TMP/j" && touch "$TMP/j/a.jsonl" "$TMP/j/b.jsonl.gz" "$TMP/j/c.txt"
	tap_eq "$(cd "$TMP/j" && complete_words hunch replay '')" "a.jsonl b.jsonl.gz" \
		"completion: journals after replay, plain and gzip"
else
	tap_ok 1 "bash-completion is installed (dev.sh installs it)"
fi
tap_done
