# bash completion for the aoe tools.  The options are read from each
# tool's --help, so they never fall out of step with the programs;
# --help and --version, which every tool takes, are always offered.
_aoe_complete()
{
	local cur prev words
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	--job_type|-j) COMPREPLY=($(compgen -W "1 2" -- "$cur")); return ;;
	--progress_bar) COMPREPLY=($(compgen -W "on off" -- "$cur")); return ;;
	--framework|-f) COMPREPLY=($(compgen -W "5" -- "$cur")); return ;;
	esac
	if [[ $1 == aoe-bank && $COMP_CWORD -eq 1 && $cur != -* ]]; then
		words=$("$1" --help 2>&1 | sed -n 's/^ *aoe-bank \([a-z]*\).*/\1/p' | sort -u)
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		words=$("$1" --help 2>&1 | grep -o -- '--[a-z][a-z_-]*' | sort -u)
		COMPREPLY=($(compgen -W "$words --help --version" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _aoe_complete aoe aoe-verify aoe-run aoe-capture \
    aoe-check aoe-opat aoe-sgat aoe-bank aoe-report aoe-space
