#!/bin/sh
# bash completion (share/aoe/completions/aoe.bash): every program has it,
# it offers each long option of the program's --help (and --help and
# --version, which every program takes), AOE's option values and
# aoe-bank's commands; make install puts a completion file for every
# program where bash-completion loads it.
. "$(dirname "$0")/tap.sh"
cd "$top" || exit 1
progs=$(ls tools/*.c pipelines/* | sed 's,\.c$,,')
plan $((3 * $(echo "$progs" | wc -w) + 4))
PATH=$top/pipelines:$PATH
comp=$top/share/aoe/completions/aoe.bash

# complete PROG WORD...: the completions of the last WORD, sorted, one a line.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
	    _aoe_complete "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
	    printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" | sort -u
}
for path in $progs; do
	t=${path##*/}
	bash -c '. "$1"; complete -p "$2"' _ "$comp" "$t" >/dev/null 2>&1
	ok $? "$t has a completion"
	# aoe-bank takes its options after the command.
	case $t in aoe-bank) w="aoe-bank list" ;; *) w=$t ;; esac
	{ "$path" --help 2>&1 | grep -o -- '--[a-z][a-z_-]*'; echo --help; echo --version; } |
	    sort -u > "$T/want"
	# shellcheck disable=SC2086
	complete_words $w -- > "$T/got"
	[ -s "$T/got" ] && cmp -s "$T/want" "$T/got"
	ok $? "$t: -- completes to every long option of its --help"
	"$path" --version >/dev/null 2>&1
	ok $? "$t takes --version"
done
[ "$(complete_words aoe --job_type '' | tr '\n' ' ')" = "1 2 " ] &&
    [ "$(complete_words aoe --progress_bar o | tr '\n' ' ')" = "off on " ]
ok $? "aoe: --job_type and --progress_bar complete to their values"
complete_words aoe-bank '' > "$T/got"
for c in commit merge diff export import verify prune show list stats lookup; do
	grep -qx "$c" "$T/got" || break
done
[ "$c" = lookup ] && grep -qx lookup "$T/got"
ok $? "aoe-bank completes its commands"
complete_words aoe-report --plot tests/fixtures/sm | grep -qx tests/fixtures/small.json
ok $? "operands complete to file names"
make -s install DESTDIR="$T/inst" PREFIX=/usr >/dev/null 2>&1
for path in $progs; do
	f=$T/inst/usr/share/bash-completion/completions/${path##*/}
	bash -c '. "$1" && complete -p "$2"' _ "$f" "${path##*/}" >/dev/null 2>&1 || break
	path=
done
[ -z "$path" ]
ok $? "make install puts a completion for every program in bash-completion's directory"
done_testing
