#!/usr/bin/env node
// ort-run.js: time an ONNX model under ONNX Runtime (onnxruntime-node, CPU),
// the peer that aoe-run is compared against.
//
// usage: node bench/ort-run.js [options] MODEL [INPUT...]
//
//   INPUT    NAME:D0,D1,...[=FILE]
//            binds model input NAME to shape D0xD1x... (this is how dynamic
//            dims get their values) and reads it from FILE, raw little-endian
//            float32, exactly D0*D1*...*4 bytes.  Without =FILE the tensor is
//            filled with deterministic pseudo-random values in [-1, 1).
//            An input not named here must have a fully static shape in the
//            model; it gets pseudo-random data too.
//   -t, --threads N   intraOpNumThreads (default 1); interOpNumThreads is 1,
//                     execution mode sequential
//   -w, --warmup N    untimed runs first (default 5)
//   -r, --runs N      timed runs (default 30)
//   -o, --out DIR     after the timed runs, write each output as
//                     DIR/<name>.bin (raw float32 LE) and DIR/<name>.shape
//                     (one line "D0,D1,..."); <name> is the output name with
//                     characters outside [A-Za-z0-9._-] turned into '_'
//   -O, --opt LEVEL   graph optimization: disabled|basic|extended|all
//                     (default all)
//   -s, --seed N      seed of the pseudo-random inputs (default 1)
//   -p, --profile FILE  profile the timed runs with ORT's own profiler
//                     (session option enableProfiling) and write its JSON
//                     trace to FILE: one "kernel_time" event per node and
//                     run, with the node name and op_name in args (see
//                     bench/node-compare.sh); the warm-up runs are left out
//                     of the median but in the trace, marked by their run
//   -h, --help
//
// stdout, one line, key=value separated by spaces (times in milliseconds,
// p90 by nearest rank):
//   ort model=PATH threads=N warmup=N runs=N median=F p90=F min=F mean=F max=F
// Diagnostics go to stderr; exit 0 on success, 2 on usage errors, 1 otherwise.
//
// onnxruntime-node is found through NODE_PATH, else in
// ${AOE_CACHE:-$HOME/.cache/aoe}/ort/node_modules (see bench/fetch-models.sh).
//
// example:
//   node bench/ort-run.js -t 2 -r 30 ~/.cache/aoe/models/ppocrv4_rec.onnx \
//       x:1,3,48,320=img.bin -o /tmp/ortout
'use strict';

const fs = require('fs');
const path = require('path');
const os = require('os');

function die(msg, code) {
  process.stderr.write('ort-run: ' + msg + '\n');
  process.exit(code === undefined ? 1 : code);
}

function usage(code) {
  const src = fs.readFileSync(__filename, 'utf8').split('\n');
  const text = [];
  for (let i = 1; i < src.length && src[i].startsWith('//'); i++)
    text.push(src[i].replace(/^\/\/ ?/, ''));
  (code ? process.stderr : process.stdout).write(text.join('\n') + '\n');
  process.exit(code);
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    const cache = process.env.AOE_CACHE || path.join(os.homedir(), '.cache', 'aoe');
    const p = path.join(cache, 'ort', 'node_modules', 'onnxruntime-node');
    try {
      return require(p);
    } catch (e2) {
      die('cannot load onnxruntime-node (NODE_PATH or ' + p + '); run bench/fetch-models.sh');
    }
  }
}

function intArg(opt, v) {
  if (v === undefined || !/^\d+$/.test(v)) die(opt + ' needs a non-negative integer', 2);
  return parseInt(v, 10);
}

function parseArgs(argv) {
  const o = { threads: 1, warmup: 5, runs: 30, out: null, opt: 'all', seed: 1,
    profile: null, model: null, inputs: [] };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let val = null;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    if (eq > 0) { val = a.slice(eq + 1); a = a.slice(0, eq); }
    const next = () => (val !== null ? val : argv[++i]);
    switch (a) {
      case '-t': case '--threads': o.threads = intArg(a, next()); break;
      case '-w': case '--warmup': o.warmup = intArg(a, next()); break;
      case '-r': case '--runs': o.runs = intArg(a, next()); break;
      case '-o': case '--out': o.out = next(); if (!o.out) die(a + ' needs a directory', 2); break;
      case '-O': case '--opt': o.opt = next(); break;
      case '-s': case '--seed': o.seed = intArg(a, next()); break;
      case '-p': case '--profile': o.profile = next(); if (!o.profile) die(a + ' needs a file', 2); break;
      case '-h': case '--help': usage(0); break;
      case '--': o.rest = argv.slice(i + 1); i = argv.length; break;
      default:
        if (a.startsWith('-') && a.length > 1) die('unknown option ' + a, 2);
        if (o.model === null) o.model = a; else o.inputs.push(a);
    }
  }
  if (o.rest) for (const a of o.rest) { if (o.model === null) o.model = a; else o.inputs.push(a); }
  if (o.model === null) usage(2);
  if (o.threads < 1) die('--threads must be >= 1', 2);
  if (o.runs < 1) die('--runs must be >= 1', 2);
  if (!['disabled', 'basic', 'extended', 'all'].includes(o.opt)) die('bad --opt ' + o.opt, 2);
  return o;
}

// NAME:D0,D1,...[=FILE]; NAME may itself contain ':', so split on the last
// ':' before the '='.
function parseInput(spec) {
  const eq = spec.indexOf('=');
  const head = eq >= 0 ? spec.slice(0, eq) : spec;
  const file = eq >= 0 ? spec.slice(eq + 1) : null;
  const c = head.lastIndexOf(':');
  if (c <= 0) die('bad input "' + spec + '": want NAME:D0,D1,...[=FILE]', 2);
  const name = head.slice(0, c);
  const ds = head.slice(c + 1);
  const dims = ds === '' ? [] : ds.split(',').map((d) => {
    if (!/^\d+$/.test(d)) die('bad dim "' + d + '" in "' + spec + '"', 2);
    return parseInt(d, 10);
  });
  return { name, dims, file };
}

// xorshift32 in [-1, 1): deterministic inputs without any file.
function fillRandom(n, seed) {
  const a = new Float32Array(n);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    a[i] = x / 2147483648 - 1;
  }
  return a;
}

function readF32(file, n) {
  const buf = fs.readFileSync(file);
  if (buf.length !== n * 4)
    die(file + ': ' + buf.length + ' bytes, want ' + n * 4 + ' (' + n + ' float32)');
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = buf.readFloatLE(i * 4);
  return a;
}

function writeF32(file, data) {
  const buf = Buffer.alloc(data.length * 4);
  for (let i = 0; i < data.length; i++) buf.writeFloatLE(Number(data[i]), i * 4);
  fs.writeFileSync(file, buf);
}

function pct(sorted, q) {
  const k = Math.max(0, Math.ceil(q * sorted.length) - 1);
  return sorted[Math.min(k, sorted.length - 1)];
}

function median(sorted) {
  const n = sorted.length;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const sopt = {
    intraOpNumThreads: o.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: o.opt,
    executionProviders: ['cpu'],
  };
  let profDir = null;
  if (o.profile) {
    profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-prof-'));
    sopt.enableProfiling = true;
    sopt.profileFilePrefix = path.join(profDir, 'ort');
  }
  const session = await ort.InferenceSession.create(o.model, sopt);

  const given = new Map();
  for (const s of o.inputs) {
    const p = parseInput(s);
    if (!session.inputNames.includes(p.name))
      die('model has no input "' + p.name + '" (inputs: ' + session.inputNames.join(' ') + ')', 2);
    given.set(p.name, p);
  }
  const meta = new Map((session.inputMetadata || []).map((m) => [m.name, m]));
  const feeds = {};
  let k = 0;
  for (const name of session.inputNames) {
    const m = meta.get(name);
    let p = given.get(name);
    if (!p) {
      const shape = m && m.shape;
      if (!shape || !shape.every((d) => typeof d === 'number' && d >= 0))
        die('input "' + name + '" has dynamic shape ' + JSON.stringify(shape) +
            '; give it as ' + name + ':D0,D1,...', 2);
      p = { name, dims: shape, file: null };
    }
    if (m && m.type && m.type !== 'float32')
      die('input "' + name + '" is ' + m.type + '; only float32 inputs are supported');
    const n = p.dims.reduce((x, y) => x * y, 1);
    const data = p.file ? readF32(p.file, n) : fillRandom(n, o.seed + k);
    feeds[name] = new ort.Tensor('float32', data, p.dims);
    k++;
  }

  for (let i = 0; i < o.warmup; i++) await session.run(feeds);
  const ms = [];
  let last = null;
  for (let i = 0; i < o.runs; i++) {
    const t0 = process.hrtime.bigint();
    last = await session.run(feeds);
    const t1 = process.hrtime.bigint();
    ms.push(Number(t1 - t0) / 1e6);
  }
  const sorted = ms.slice().sort((a, b) => a - b);
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  const f = (x) => x.toFixed(3);
  process.stdout.write(['ort', 'model=' + o.model, 'threads=' + o.threads,
    'warmup=' + o.warmup, 'runs=' + o.runs, 'median=' + f(median(sorted)),
    'p90=' + f(pct(sorted, 0.9)), 'min=' + f(sorted[0]), 'mean=' + f(mean),
    'max=' + f(sorted[sorted.length - 1])].join(' ') + '\n');

  if (o.profile) {
    session.endProfiling();
    const f = fs.readdirSync(profDir).filter((n) => n.endsWith('.json'));
    if (f.length !== 1) die('no profile written in ' + profDir);
    fs.copyFileSync(path.join(profDir, f[0]), o.profile);
    fs.rmSync(profDir, { recursive: true, force: true });
  }

  if (o.out) {
    fs.mkdirSync(o.out, { recursive: true });
    for (const name of session.outputNames) {
      const t = last[name];
      const base = path.join(o.out, name.replace(/[^A-Za-z0-9._-]/g, '_'));
      if (t.type !== 'float32')
        process.stderr.write('ort-run: output "' + name + '" is ' + t.type + ', written as float32\n');
      writeF32(base + '.bin', t.data);
      fs.writeFileSync(base + '.shape', t.dims.join(',') + '\n');
    }
  }
}

main().catch((e) => die(e && e.message ? e.message : String(e)));
