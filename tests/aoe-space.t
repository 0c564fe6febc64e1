#!/bin/sh
# aoe-space: spaces, counts and samples of the bundled example; bad usage.
. "$(dirname "$0")/tap.sh"
plan 14
ex=$top/share/aoe/models/example.onnx
cd "$top" || exit 1

run aoe-space "$ex"
ok $status "prints the spaces of the example"
grep -q '^b1.conv Conv: [0-9]* points$' "$T/out" &&
    grep -q '^  algo *{2,3,6,7,8} default 8$' "$T/out"
ok $? "names each node, its points and the conv algorithms"

run aoe-space --json --node b1.conv "$ex"
python3 - "$T/out" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
o = json.loads(lines[0])
k = {x['name']: x for x in o['knobs']}
ok = (len(lines) == 1 and o['op_type'] == 'Conv' and o['node'] == 'b1.conv'
      and 'mr' in k and k['mr']['default'] in k['mr']['values']
      and o['default']['algo'] == 8 and 'constraints' in o and o['size'] > 1)
sys.exit(0 if ok else 1)
PY
ok $? "--json prints one object with knobs, constraints and default"

run aoe-space --count "$ex"
[ "$status" -eq 0 ] && [ "$(wc -l <"$T/out")" -eq 14 ] &&
    grep -q "^head.fc	Gemm	2$" "$T/out"
ok $? "--count prints a line per live node"

run aoe-space --op-type Relu --count "$ex"
[ "$status" -eq 0 ] && ! grep -qv "	Relu	" "$T/out"
ok $? "--op-type selects the nodes of one type"

run aoe-space --sample 5 --seed 3 --op-type Conv "$ex"
cp "$T/out" "$T/s1"
run aoe-space --sample 5 --seed 3 --op-type Conv "$ex"
[ "$status" -eq 0 ] && [ "$(wc -l <"$T/out")" -eq 20 ] && cmp -s "$T/s1" "$T/out"
ok $? "--sample with a seed is reproducible"
run aoe-space --sample 5 --seed 4 --op-type Conv "$ex"
! cmp -s "$T/s1" "$T/out"
ok $? "another seed gives other schedules"

run aoe-space --json --sample 2 --node stem.conv "$ex"
python3 -c 'import json,sys; [json.loads(l)["schedule"]["algo"] for l in open(sys.argv[1])]' "$T/out"
ok $? "--json --sample prints schedules as JSON"

run aoe-space --help
[ "$status" -eq 0 ] && grep -q '^usage: aoe-space' "$T/out"
ok $? "--help prints the usage on stdout"

run aoe-space
[ "$status" -eq 2 ] && grep -q '^usage: aoe-space' "$T/err" && [ ! -s "$T/out" ]
ok $? "no model is a usage error"
run aoe-space --node a --op-type Conv "$ex"
[ "$status" -eq 2 ] && grep -q '^usage: aoe-space' "$T/err" && [ ! -s "$T/out" ]
ok $? "--node with --op-type is a usage error"
fails_with 2 "out of range" "--sample 0 is refused" aoe-space --sample 0 "$ex"
fails_with 3 "no live node named 'nope'" "an unknown node is refused" \
    aoe-space --node nope "$ex"
fails_with 5 "no-such" "a missing model is an I/O error" \
    aoe-space "$T/no-such.onnx"
done_testing
