#!/bin/sh
# Every program has a man page that mandoc -Tlint passes, and its usage
# text names the same options as the page's SYNOPSIS.
. "$(dirname "$0")/tap.sh"
cd "$top" || exit 1
pages=$(ls man/man1/*.1 man/man3/*.3 man/man5/*.5 man/man7/*.7)
tools=$(ls tools/*.c pipelines/* | sed 's,\.c$,,')
plan $(($(echo "$pages" | wc -w) + 3 * $(echo "$tools" | wc -w) + 1))
for p in $pages; do
	run mandoc -Tlint -W warning "$p"
	ok $status "mandoc -Tlint $p"
done
for path in $tools; do
	t=${path##*/}
	[ -f "man/man1/$t.1" ]
	ok $? "$t has a man page"
	# Each long option in --help appears in the SYNOPSIS, and back.
	"$path" --help 2>&1 | grep -o -- '--[a-z_-]*' | sort -u > "$T/help"
	mandoc -Tutf8 "man/man1/$t.1" 2>/dev/null | col -b |
	    sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' |
	    grep -o -- '--[a-z_-]*' | sort -u > "$T/syn"
	cmp -s "$T/help" "$T/syn"
	ok $? "$t --help and the SYNOPSIS list the same options"
	grep -q "^\.Xr $t 1" man/man7/aoe.7
	ok $? "aoe(7) lists $t"
done
# mandoc looks .Xr up in the installed pages only: check ours in the tree.
bad=
for x in $(sed -n 's/^\.Xr \(aoe[a-z-]*\) \([1-9]\).*/\1.\2/p' $pages | sort -u); do
	[ -f "man/man${x##*.}/$x" ] || bad="$bad $x"
done
[ -z "$bad" ]
ok $? "every .Xr to an aoe page names a page in man/${bad:+ (missing:$bad)}"
done_testing
