#!/bin/sh
# check-layers: libaoe is layered; an upward call, a cycle, or an object
# in no layer is caught and named.
. "$(dirname "$0")/tap.sh"
plan 10
cd "$top" || exit 1
layers=$(sed -n "s/^LAYERS = //p" Makefile)
objs=$(for c in lib/*/*.c; do echo "${c%.c}.o"; done)

run sh lib/check-layers $layers -- $objs
ok $status "libaoe's objects are layered"
grep -q 'none upward, no cycle' "$T/err"
ok $? "says so, with the counts"

run sh lib/check-layers -g $layers -- $objs
grep -q '^lib/engine/prepare.o lib/runtime/exec.o ' "$T/out" &&
    ! grep -q '^lib/runtime/exec.o lib/engine/' "$T/out"
ok $? "-g prints the graph: the engine calls the runtime, not back"

# A deliberate upward call: a base file that prepares a graph.
mkdir -p "$T/lib/base"
cat >"$T/lib/base/up.c" <<'EOF'
struct aoe_graph;
int aoe_graph_prepare(struct aoe_graph *, const void *);
int up(struct aoe_graph *g) { return aoe_graph_prepare(g, 0); }
EOF
cc -c -o "$T/lib/base/up.o" "$T/lib/base/up.c"
run sh lib/check-layers $layers -- $objs "$T/lib/base/up.o"
[ $status -eq 1 ] && grep -q "up.o (layer base) calls up into lib/engine/prepare.o (layer engine): aoe_graph_prepare" "$T/err"
ok $? "an upward call fails, naming the files, the layers and the symbol"

# A cycle between two files of one layer.
mkdir -p "$T/lib/ir"
printf 'int b(void);\nint a(void) { return b(); }\n' >"$T/lib/ir/a.c"
printf 'int a(void);\nint b(void) { return a() + 1; }\n' >"$T/lib/ir/b.c"
cc -c -o "$T/lib/ir/a.o" "$T/lib/ir/a.c"
cc -c -o "$T/lib/ir/b.o" "$T/lib/ir/b.c"
run sh lib/check-layers base ir -- "$T/lib/ir/a.o" "$T/lib/ir/b.o"
[ $status -eq 1 ] && grep -q 'cycle: .*a.o -> .*b.o -> .*a.o\|cycle: .*b.o -> .*a.o -> .*b.o' "$T/err"
ok $? "a cycle within a layer fails, naming its files"

# Lower calling lower is fine, and so is a chain upward-free.
printf 'int b(void) { return 1; }\n' >"$T/lib/ir/b.c"
cc -c -o "$T/lib/ir/b.o" "$T/lib/ir/b.c"
run sh lib/check-layers base ir -- "$T/lib/ir/a.o" "$T/lib/ir/b.o"
ok $status "a call within a layer without a cycle passes"

mkdir -p "$T/lib/misc"
cp "$T/lib/ir/b.o" "$T/lib/misc/b.o"
run sh lib/check-layers base ir -- "$T/lib/ir/a.o" "$T/lib/misc/b.o"
[ $status -eq 1 ] && grep -q 'misc/b.o: in no layer' "$T/err"
ok $? "an object outside the named layers fails"

run sh lib/check-layers base ir -- "$T/nonexistent.o"
[ $status -eq 2 ] && grep -q "cannot read" "$T/err"
ok $? "a missing object is a usage error"

run sh lib/check-layers base ir
[ $status -eq 2 ] && grep -q '^usage: check-layers' "$T/err"
ok $? "no objects: usage"

# The public header compiles alone, and so does each layer's.
rc=0
for h in lib/aoe.h lib/*/aoe_*.h lib/kernels/kernel.h; do
	printf '#include "%s"\n' "${h##*/}" >"$T/h.c"
	cc -std=c11 -D_GNU_SOURCE -march=x86-64-v3 -Ilib $(for l in $layers; do printf ' -Ilib/%s' $l; done) \
	    -fsyntax-only "$T/h.c" 2>>"$T/herr" || { echo "# $h does not compile alone"; rc=1; }
done
ok $rc "every header compiles on its own"
