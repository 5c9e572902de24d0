#!/usr/bin/env node
// Ground truth for shapeflow's precision: runs an ONNX model with onnxruntime on concrete inputs
// and prints the actual dtype and shape of every node output of the main graph, as JSON
//   {"tensor name": {"dtype": "float32", "shape": [1, 64, 112, 112]}, ...}
// onnxruntime returns only graph outputs, so the model is first rewritten by
// ../expose_all_outputs.py (cached by path, size and mtime) to list every node output as one.
//
// usage: node actual_shapes.js MODEL [--input NAME=D0,D1,..]... [--dim SYM=N]... [--fill NAME=V]...
//                              [--values] [--cache DIR] [--python PATH] [-o OUT.json]
//   --input  concrete dims of an input; otherwise the model's dims, with --dim giving the value of
//            each dim_param (e.g. --dim N=2 --dim H=192 for x: [N,3,H,W]).
//   --fill   the value every element of an input holds. Defaults: floats are deterministic
//            pseudo-random in [0, 1); integer and bool inputs whose name looks like a mask hold 1,
//            other integer inputs hold 0 (a valid token id / type id / index).
//   --values also report "value" (a flat list) for int32/int64/bool tensors of at most 64 elements.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { spawnSync } = require('child_process');

function die(msg) {
  process.stderr.write(`actual_shapes: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const a = { model: null, inputs: {}, dims: {}, fill: {}, values: false, out: null,
              cache: process.env.SHAPEFLOW_ORT_CACHE || path.join(os.tmpdir(), 'shapeflow-ort-cache'),
              python: process.env.PYTHON || '/usr/bin/python3' };
  const kv = (s, flag) => {
    const i = s === undefined ? -1 : s.indexOf('=');
    if (i <= 0) die(`${flag} expects NAME=VALUE, got '${s}'`);
    return [s.slice(0, i), s.slice(i + 1)];
  };
  const int = (s, what) => {
    if (!/^-?\d+$/.test(s.trim())) die(`${what}: '${s}' is not an integer`);
    return Number(s);
  };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i];
    if (f === '--input') {
      const [n, v] = kv(argv[++i], f);
      a.inputs[n] = v === '' ? [] : v.split(',').map((d) => int(d, `--input ${n}`));
    } else if (f === '--dim') {
      const [n, v] = kv(argv[++i], f);
      a.dims[n] = int(v, `--dim ${n}`);
    } else if (f === '--fill') {
      const [n, v] = kv(argv[++i], f);
      a.fill[n] = Number(v);
    } else if (f === '--values') a.values = true;
    else if (f === '--cache') a.cache = argv[++i];
    else if (f === '--python') a.python = argv[++i];
    else if (f === '-o') a.out = argv[++i];
    else if (f === '-h' || f === '--help') {
      process.stdout.write(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 17).join('\n') + '\n');
      process.exit(0);
    } else if (f.startsWith('-')) die(`unknown option ${f}`);
    else if (a.model === null) a.model = f;
    else die(`unexpected argument ${f}`);
  }
  if (!a.model) die('no model given (see --help)');
  return a;
}

// Returns the path of the rewritten model, making it once per (path, size, mtime).
function exposedModel(args) {
  const st = fs.statSync(args.model);
  const abs = path.resolve(args.model);
  const key = crypto.createHash('sha1').update(`${abs}\0${st.size}\0${st.mtimeMs}`).digest('hex').slice(0, 16);
  fs.mkdirSync(args.cache, { recursive: true });
  const out = path.join(args.cache, `${path.basename(abs, '.onnx')}-${key}.onnx`);
  if (fs.existsSync(out) && fs.existsSync(out + '.json')) return out;
  const tmp = `${out}.${process.pid}.tmp.onnx`;
  const script = path.join(__dirname, '..', 'expose_all_outputs.py');
  const r = spawnSync(args.python, [script, abs, tmp], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) die(`expose_all_outputs.py failed on ${args.model}`);
  fs.renameSync(tmp + '.json', out + '.json');
  fs.renameSync(tmp, out);
  return out;
}

// Deterministic uniform [0, 1) so that two runs of the same sizes see the same data.
function* lcg(seed) {
  let s = seed >>> 0;
  for (;;) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    yield s / 4294967296;
  }
}

function makeFeed(ort, inp, dims, fillValue) {
  const count = dims.reduce((p, d) => p * d, 1);
  const maskLike = /mask/i.test(inp.name);
  const fill = fillValue !== undefined ? fillValue : (maskLike ? 1 : 0);
  const rnd = lcg(count + inp.name.length);
  switch (inp.dtype) {
    case 'float32': case 'float64': {
      const arr = inp.dtype === 'float32' ? new Float32Array(count) : new Float64Array(count);
      for (let i = 0; i < count; i++) arr[i] = fillValue !== undefined ? fillValue : rnd.next().value;
      return new ort.Tensor(inp.dtype, arr, dims);
    }
    case 'float16': {  // 0x3c00 is 1.0; random halves are not worth the code here
      const arr = new Uint16Array(count).fill(0x3800);  // 0.5
      return new ort.Tensor('float16', arr, dims);
    }
    case 'int64': return new ort.Tensor('int64', new BigInt64Array(count).fill(BigInt(fill)), dims);
    case 'uint64': return new ort.Tensor('uint64', new BigUint64Array(count).fill(BigInt(fill)), dims);
    case 'int32': return new ort.Tensor('int32', new Int32Array(count).fill(fill), dims);
    case 'uint32': return new ort.Tensor('uint32', new Uint32Array(count).fill(fill), dims);
    case 'int16': return new ort.Tensor('int16', new Int16Array(count).fill(fill), dims);
    case 'uint16': return new ort.Tensor('uint16', new Uint16Array(count).fill(fill), dims);
    case 'int8': return new ort.Tensor('int8', new Int8Array(count).fill(fill), dims);
    case 'uint8': return new ort.Tensor('uint8', new Uint8Array(count).fill(fill), dims);
    case 'bool': return new ort.Tensor('bool', new Uint8Array(count).fill(fillValue !== undefined ? fill : 1), dims);
    case 'string': return new ort.Tensor('string', new Array(count).fill('a'), dims);
    default: die(`input ${inp.name}: dtype ${inp.dtype} is not supported`);
  }
  return null;
}

function inputDims(inp, args) {
  if (args.inputs[inp.name]) {
    const d = args.inputs[inp.name];
    if (inp.dims && inp.dims.length !== d.length) die(`--input ${inp.name}: model says rank ${inp.dims.length}, got ${d.length}`);
    return d;
  }
  if (!inp.dims) die(`input ${inp.name} has no shape in the model: give --input ${inp.name}=...`);
  return inp.dims.map((d, i) => {
    if (typeof d === 'number') return d;
    if (typeof d === 'string' && d in args.dims) return args.dims[d];
    return die(`input ${inp.name} dim ${i} is ${d === null ? 'unknown' : `'${d}'`}: give --input or --dim`);
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = require('onnxruntime-node');
  const exposed = exposedModel(args);
  const info = JSON.parse(fs.readFileSync(exposed + '.json', 'utf8'));
  for (const n of Object.keys(args.inputs)) {
    if (!info.inputs.some((i) => i.name === n)) die(`--input ${n}: the model has no such input`);
  }
  const feeds = {};
  for (const inp of info.inputs) feeds[inp.name] = makeFeed(ort, inp, inputDims(inp, args), args.fill[inp.name]);
  const session = await ort.InferenceSession.create(exposed, {
    graphOptimizationLevel: 'disabled',  // ground truth: run the graph as written
    executionProviders: ['cpu'],
    intraOpNumThreads: 2,
    logSeverityLevel: 3,
  });
  const results = await session.run(feeds);
  const lines = [];  // one tensor per line, in node order (a JS object would sort numeric names first)
  for (const name of info.node_outputs) {
    const t = results[name];
    if (!t) continue;
    const entry = { dtype: t.type, shape: Array.from(t.dims, Number) };
    if (args.values && t.size <= 64 && ['int64', 'int32', 'bool'].includes(t.type)) {
      entry.value = Array.from(t.data, (v) => (t.type === 'bool' ? (v ? 1 : 0) : Number(v)));
    }
    lines.push(`${JSON.stringify(name)}: ${JSON.stringify(entry)}`);
  }
  if (info.skipped.length) process.stderr.write(`actual_shapes: not tensors, skipped: ${info.skipped.join(', ')}\n`);
  const text = `{\n${lines.join(',\n')}\n}\n`;
  if (args.out) fs.writeFileSync(args.out, text);
  else process.stdout.write(text);
}

main().catch((e) => die(e && e.stack ? e.stack : String(e)));
