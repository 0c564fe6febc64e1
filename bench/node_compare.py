#!/usr/bin/python3
"""node_compare.py: where aoe loses to ONNX Runtime, node by node.

usage: node_compare.py [-n TOP] [-m] [-p MS] MODEL.onnx ORT-PROFILE.json AOE-PROFILE.txt

ORT-PROFILE is the JSON trace of bench/ort-run.js -p (one kernel_time event
per node and run; the first run of each node is taken as warm-up and left
out when there are others, the rest give a mean).  AOE-PROFILE is the
per-node table `aoe-run --profile` prints on stderr (node, op_type, output,
time_us, ...: a mean per run too, so that both carry a loaded machine's
preemptions alike).  With -m ORT's figure is each node's minimum over
the runs instead, to set beside an aoe table of per-node minima (on a
loaded machine the minimum is the figure that preemptions spoil least).

ORT's profiler slows what it times: on a Zen 5 host mobilenet_v2's
profiled kernel_time events summed to 3.50 ms a run where the same
session unprofiled ran in 3.09 (regnet_x_400mf 3.54 against 3.19), so
its per-node figures flatter aoe by 5-13 %.  -p MS, ORT's median run
time unprofiled (bench/node-compare.sh measures it), prints that
overhead and scales every ORT figure by MS over the profiled nodes' sum
(with -m, the sum of their means), aoe's own profile being two clock
reads a node.

Both runtimes rename and fuse nodes.  Every entry is charged to a group
named after an aoe node: an ORT node keeps its name when aoe has a node of
that name; otherwise its name is looked up as an ONNX node name, or as an
ONNX tensor name (ORT names many fused and NCHWc nodes after their output,
with a suffix such as _nchwc), and from that ONNX node the walk goes back
through the producers of its first input until it reaches a node aoe kept
(a Clip that both fused into its Conv lands on the Conv).  What matches
nothing is charged to "(ort) OP" or stays under its own aoe name.

Prints two tables, biggest loss first: by op type (ORT's fused op names
mapped back: FusedConv and NchwcConv are Conv, FusedGemm Gemm, ...; aoe's
fused Conv with a SiLU is still Conv; a Conv is split into "Conv dwKxK"
(depthwise), "Conv 1x1" and "Conv KxK" by its ONNX node) and by node group; loss_us is
aoe_us - ort_us.  Exit 0, or 2 on usage errors, 1 on unreadable input.
"""
import json
import re
import statistics
import sys
from collections import defaultdict

import onnx

OPMAP = {'FusedConv': 'Conv', 'NchwcConv': 'Conv', 'FusedGemm': 'Gemm',
         'FusedMatMul': 'MatMul', 'NchwcMaxPool': 'MaxPool',
         'NchwcAveragePool': 'AveragePool',
         'NchwcGlobalAveragePool': 'GlobalAveragePool',
         'QuickGelu': 'Swish', 'BiasGelu': 'Gelu', 'FastGelu': 'Gelu',
         'ReorderInput': 'Reorder', 'ReorderOutput': 'Reorder',
         'AoeReorder': 'Reorder'}


def die(msg, code=1):
    sys.stderr.write('node_compare: ' + msg + '\n')
    sys.exit(code)


def read_ort(path, stat=statistics.fmean):
    try:
        ev = json.load(open(path))
    except (OSError, ValueError) as e:
        die('%s: %s' % (path, e))
    runs = defaultdict(list)
    op = {}
    for e in ev:
        n = e.get('name', '')
        if e.get('cat') != 'Node' or not n.endswith('_kernel_time'):
            continue
        n = n[:-len('_kernel_time')]
        runs[n].append(float(e['dur']))
        op[n] = e.get('args', {}).get('op_name', '?')
    out = {}
    for n, d in runs.items():
        if len(d) > 1:
            d = d[1:]
        out[n] = (op[n], stat(d))
    return out


def read_aoe(path):
    out = {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        die('%s: %s' % (path, e))
    head = False
    for ln in lines:
        f = ln.split()
        if not f:
            continue
        if f[0] == 'node' and 'time_us' in f:
            head = True
            continue
        if not head or f[0] == 'total':
            if f and f[0] == 'total':
                head = False
            continue
        if len(f) < 6:
            continue
        try:
            out[f[0]] = (f[1], float(f[3]))
        except ValueError:
            continue
    if not out:
        die('%s: no aoe-run --profile table' % path)
    return out


def main(argv):
    top = 25
    stat = statistics.fmean
    plain = None
    while argv and argv[0] in ('-n', '-m', '-p'):
        if argv[0] == '-m':
            stat = min
            argv = argv[1:]
            continue
        if len(argv) < 2:
            die(__doc__.splitlines()[2], 2)
        try:
            v = float(argv[1])
        except ValueError:
            die('%s: not a number: %s' % (argv[0], argv[1]), 2)
        if v <= 0:
            die('%s: must be positive: %s' % (argv[0], argv[1]), 2)
        if argv[0] == '-n':
            top = int(v)
        else:
            plain = v
        argv = argv[2:]
    if len(argv) != 3:
        die(__doc__.splitlines()[2], 2)
    model = onnx.load(argv[0], load_external_data=False)
    ort = read_ort(argv[1], stat)
    aoe = read_aoe(argv[2])
    if plain is not None:
        # The profiled nodes' sum a run (means even under -m).
        means = ort if stat is statistics.fmean else read_ort(argv[1])
        prof = sum(v[1] for v in means.values()) / 1000
        sc = plain / prof if prof > 0 else 1
        print('# ort unprofiled %.3f ms a run, its profiled nodes %.3f: '
              'node figures scaled by %.3f' % (plain, prof, sc))
        ort = {n: (op, us * sc) for n, (op, us) in ort.items()}
    nodes = {n.name: n for n in model.graph.node if n.name}
    producer = {}
    for n in model.graph.node:
        for o in n.output:
            producer[o] = n

    def anchor(name):
        if name in aoe:
            return name
        nd = nodes.get(name)
        if nd is None:
            base = re.sub(r'(_nchwc|_token_\d+)+$', '', name)
            nd = nodes.get(base) or producer.get(base)
        for _ in range(16):
            if nd is None:
                return None
            if nd.name in aoe:
                return nd.name
            if not nd.input or nd.input[0] not in producer:
                return None
            nd = producer[nd.input[0]]
        return None

    inits = {t.name: list(t.dims) for t in model.graph.initializer}

    def kind(name, op):
        """op, with Conv split into depthwise, 1x1 and KxK by the ONNX
        node the entry is charged to."""
        op = OPMAP.get(op, op)
        nd = nodes.get(name)
        if op != 'Conv' or nd is None or nd.op_type != 'Conv':
            return op
        at = {a.name: onnx.helper.get_attribute_value(a)
              for a in nd.attribute}
        w = inits.get(nd.input[1]) if len(nd.input) > 1 else None
        grp = at.get('group', 1)
        if w and grp > 1 and w[1] == 1:
            return 'Conv dw%s' % 'x'.join(map(str, w[2:]))
        if w and all(k == 1 for k in w[2:]):
            return 'Conv 1x1'
        return 'Conv %s' % ('x'.join(map(str, w[2:])) if w else '')

    grp = defaultdict(lambda: [0.0, 0.0, set(), set()])
    byop = defaultdict(lambda: [0.0, 0.0])
    for n, (op, us) in aoe.items():
        g = grp[n]
        g[0] += us
        g[2].add(op)
        byop[kind(n, op)][0] += us
    matched = 0
    for n, (op, us) in ort.items():
        a = anchor(n)
        if a is None:
            a = '(ort) ' + op
        else:
            matched += 1
        g = grp[a]
        g[1] += us
        g[3].add(op)
        byop[kind(a, op)][1] += us
    ta = sum(v[1] for v in aoe.values())
    to = sum(v[1] for v in ort.values())
    print('# aoe %.1f us in %d nodes, ort %.1f us in %d nodes '
          '(%d matched to an aoe node); aoe/ort %.2f'
          % (ta, len(aoe), to, len(ort), matched, ta / to if to else 0))
    print('\n## by op type, biggest loss first')
    print('%-22s %10s %10s %10s %6s' % ('op_type', 'aoe_us', 'ort_us',
                                        'loss_us', 'ratio'))
    for op, (a, o) in sorted(byop.items(), key=lambda kv: kv[1][1] - kv[1][0]):
        print('%-22s %10.1f %10.1f %10.1f %6s' % (
            op, a, o, a - o, '%.2f' % (a / o) if o > 0 else '-'))
    print('\n## by node (aoe node name; ORT nodes fused or renamed charged '
          'to it), top %d losses' % top)
    print('%-48s %-24s %-18s %9s %9s %9s %6s' % (
        'node', 'aoe_op', 'ort_op', 'aoe_us', 'ort_us', 'loss_us', 'ratio'))
    rows = sorted(grp.items(), key=lambda kv: kv[1][1] - kv[1][0])
    for n, (a, o, ao, oo) in rows[:top]:
        print('%-48s %-24s %-18s %9.1f %9.1f %9.1f %6s' % (
            n[-48:], '+'.join(sorted(ao)) or '-', '+'.join(sorted(oo)) or '-',
            a, o, a - o, '%.2f' % (a / o) if o > 0 else '-'))


if __name__ == '__main__':
    main(sys.argv[1:])
