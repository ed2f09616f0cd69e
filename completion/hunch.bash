# bash completion for hunch(1): commands, options, tunable names after
# --set, program files after run, process ids after attach, journals after
# replay.  Installed where `pkg-config --variable=completionsdir
# bash-completion` says; bash-completion loads it on first use of `hunch`.

_hunch_tunables()
{
	# the names `hunch check --list` prints: "NAME  VALUE  [MIN, MAX] ..."
	hunch check --list 2>/dev/null |
		awk '/^[A-Za-z_][A-Za-z0-9_]* +[-0-9.]/ {print $1}'
}

_hunch()
{
	local cur prev words cword
	_init_completion || return

	local cmds="run attach where check points replay help version"
	local session="--where --verbose --no-rtlib --seconds --batch
		--screenshot --report --time-limit --hypotheses --set --journal
		--no-journal --kill-at-end --phase-at --follow --no-follow --tree
		--help"
	local cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		run|attach|where|check|points|replay|help|version)
			cmd=${words[i]}; break ;;
		--) cmd=run; break ;;
		esac
	done

	case $prev in
	--set)
		COMPREPLY=($(compgen -W "$(_hunch_tunables)" -S = -- "$cur"))
		compopt -o nospace
		return ;;
	--report|--journal|--screenshot|--hypotheses|--export-dot|--export-shg-json|--export-where-json)
		_filedir
		return ;;
	--export-csv)
		_filedir -d
		return ;;
	--hierarchy|-H)
		COMPREPLY=($(compgen -W "Code Process SyncObject Files" -- "$cur"))
		return ;;
	--pid|-p)
		_pids
		return ;;
	--seconds|-s|--time-limit|--phase-at|--debuginfod-wait)
		return ;;
	esac

	case $cmd in
	"")
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--batch --screenshot --help --version $session" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		fi ;;
	run)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$session" -- "$cur"))
		else
			# the program, then its own arguments
			_command_offset $((i + 1))
		fi ;;
	attach)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$session" -- "$cur"))
		else
			_pids
		fi ;;
	where)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--tree --hierarchy --pid --debuginfod-wait --help" -- "$cur"))
		else
			_filedir
		fi ;;
	check)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--list --set --help" -- "$cur"))
		else
			_filedir json
		fi ;;
	points)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--all --refused --help" -- "$cur"))
		else
			_filedir
		fi ;;
	replay)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--batch --report --set --export-dot --export-shg-json --export-where-json --export-csv --help" -- "$cur"))
		else
			# journals (plain or gzip) and directories of them
			_filedir '@(jsonl|jsonl.gz)'
		fi ;;
	help)
		COMPREPLY=($(compgen -W "$cmds" -- "$cur")) ;;
	esac
}
complete -F _hunch hunch
