# tmux-lib.sh - the tmux driver shared by the dashboard's terminal tests
# (test-search.sh, test-replay.sh, test-panes.sh): a private tmux server
# per test (socket $SOCK, config in $TMP), terminals of a given size
# running a plain shell, keys typed in, and screens captured and waited
# for.  Source it after setting TMP and SOCK; each test sets its own
# EXIT trap (`TM kill-server` at least).

printf 'set -g default-terminal tmux-256color\nset -g history-limit 5000\nset -s exit-empty off\n' >"$TMP/tmux.conf"
TM() { tmux -L "$SOCK" -f "$TMP/tmux.conf" "$@"; }

new_term() {  # new_term NAME W H
	TM new-session -d -s "$1" -x "$2" -y "$3" \
		"env PS1='tui\$ ' LANG=C.UTF-8 bash --norc --noprofile"
	wait_screen "$1" 'tui\$' 5
}
type_in() { TM send-keys -t "$1" -l "$2"; TM send-keys -t "$1" Enter; }
keys() { local s=$1; shift; TM send-keys -t "$s" "$@"; }
screen() { TM capture-pane -p -t "$1"; }
screen_all() { TM capture-pane -p -J -S - -t "$1"; }
wait_screen() {  # wait_screen NAME ERE [SECONDS]
	local i n=$(( ${3:-10} * 20 ))
	for ((i = 0; i < n; i++)); do
		screen "$1" | grep -Eq -- "$2" && return 0
		sleep 0.05
	done
	echo "# timed out waiting for /$2/ on $1:" >&2
	screen "$1" | sed 's/^/#  | /' >&2
	return 1
}
check_screen() {  # check_screen NAME ERE TEST-NAME...
	local s=$1 re=$2; shift 2
	tap_ok $(wait_screen "$s" "$re" "${WAIT:-10}"; echo $?) "$*"
}
