#!/bin/sh
# make install into a DESTDIR: libaoe.so with its soname and only the
# session API exported, libaoe.a, aoe_session.h, aoe.pc, man3 pages for
# every exported function; a program built with pkg-config against that
# tree runs a model, linked shared and static; make uninstall removes it.
. "$(dirname "$0")/tap.sh"
plan 13
cd "$top" || exit 1
root=$T/root
prefix=/usr/local
make -s install DESTDIR="$root" PREFIX=$prefix >"$T/out" 2>"$T/err"
ok $? "make install DESTDIR=... PREFIX=$prefix" || sed 's/^/# /' "$T/err"
lib=$root$prefix/lib
[ -f "$lib/libaoe.so.$(sed -n 's/^#define AOE_VERSION "\(.*\)"/\1/p' lib/base/aoe_base.h)" ] &&
    [ -L "$lib/libaoe.so.0" ] && [ -L "$lib/libaoe.so" ] && [ -f "$lib/libaoe.a" ] &&
    [ -f "$root$prefix/include/aoe_session.h" ] && [ -f "$lib/pkgconfig/aoe.pc" ]
ok $? "installs libaoe.so.VERSION, its links, libaoe.a, aoe_session.h and aoe.pc"
readelf -d "$lib/libaoe.so" | grep -q 'SONAME.*\[libaoe\.so\.0\]'
ok $? "the soname is libaoe.so.0"
nm -D --defined-only "$lib/libaoe.so" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
    sort >"$T/syms"
grep -v '^aoe_session_\|^aoe_value_free$\|^aoe_errmsg$\|^aoe_dtype_name$\|^aoe_version$' "$T/syms" >"$T/extra"
[ -s "$T/syms" ] && [ ! -s "$T/extra" ] && ! grep -q aoe_graph_prepare "$T/syms"
ok $? "only the session API is exported ($(wc -l <"$T/syms") functions)"
missing=
for f in $(cat "$T/syms"); do
	[ -e "$root$prefix/share/man/man3/$f.3" ] || missing="$missing $f"
done
[ -z "$missing" ]
ok $? "every exported function has a man3 page${missing:+ (missing:$missing)}"
# Every function the public header declares is exported.
sed -n 's/^[a-z].* \**\(aoe_[a-z_]*\)(.*/\1/p' lib/session/aoe_session.h | sort >"$T/decl"
comm -23 "$T/decl" "$T/syms" >"$T/unexp"
[ ! -s "$T/unexp" ]
ok $? "every function aoe_session.h declares is exported"

export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
flags=$(pkg-config --cflags --libs aoe)
ok $? "pkg-config --cflags --libs aoe: $flags"
# A library built with the sanitizers needs them in the program too.
san=
readelf -d "$lib/libaoe.so" | grep -q 'libasan' &&
    san='-fsanitize=address,undefined'
cc $san -o "$T/embed" tests/embed.c $flags 2>"$T/err"
ok $? "tests/embed.c builds against the installed tree" || sed 's/^/# /' "$T/err"
LD_LIBRARY_PATH=$lib "$T/embed" share/aoe/models/example.onnx >"$T/out" 2>"$T/err"
grep -q '^probabilities 1x10 sum=1.0000$' "$T/out"
ok $? "and runs the example model through libaoe.so: $(cat "$T/out" "$T/err")"
cc $san -o "$T/embed-static" tests/embed.c $(pkg-config --cflags --static --libs aoe |
    sed 's/-laoe/-l:libaoe.a/') 2>"$T/err" &&
    "$T/embed-static" share/aoe/models/example.onnx >"$T/out2" && cmp -s "$T/out" "$T/out2"
ok $? "linked static (pkg-config --static), the same output"

# The Python module, where Debian's python3 looks for PREFIX's modules.
pydir=$(ls -d "$root$prefix"/lib/python3*/dist-packages 2>/dev/null | head -1)
grep -q "^_LIBDIR = \"$prefix/lib\"\$" "$pydir/aoe/__init__.py" 2>/dev/null
ok $? "installs the Python module aoe in ${pydir#$root}, which finds $prefix/lib"
py=
for p in ${PYTHON:-} /usr/bin/python3; do
	"$p" -c 'import numpy' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ] || [ -n "$san" ]; then
	echo "ok 12 # SKIP ${san:+the sanitizers' build}${py:-no python3 with numpy}"
	tap_n=$((tap_n + 1))
else
	(cd "$T" && AOE_LIBRARY=$lib/libaoe.so.0 PYTHONPATH=$pydir "$py" -c '
import aoe, numpy as np
s = aoe.InferenceSession("'"$top/share/aoe/models/example.onnx"'")
print("%.4f" % s.run(None, {"image": np.zeros((1, 3, 64, 64), np.float32)})[0].sum())
' >"$T/pyout" 2>&1)
	[ "$(cat "$T/pyout")" = 1.0000 ]
	ok $? "the installed module runs the example: $(cat "$T/pyout")"
fi

make -s uninstall DESTDIR="$root" PREFIX=$prefix >/dev/null 2>&1
left=$(find "$root" ! -type d | sed "s|^$root||")
[ -z "$left" ]
ok $? "make uninstall removes every file it installed${left:+: $left}"
