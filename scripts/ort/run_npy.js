#!/usr/bin/env node
// Runs a model with onnxruntime (CPU, one thread) on inputs given as .npy files and writes each
// output as OUTDIR/NAME.npy (the file name of `shapeflow run --out`), for scripts/eval_check.py.
// usage: node run_npy.js MODEL OUTDIR NAME=FILE.npy... [--optimize] [--repeat R] [--threads T]
//   OUTDIR "-" writes nothing; --repeat R runs R more times after the first and prints
//   {"median_ms": ...} (the median time of one session.run), for bench/eval.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

const DTYPES = { '<f4': 'float32', '<f8': 'float64', '<i8': 'int64', '<i4': 'int32', '|b1': 'bool',
                 '|u1': 'uint8', '|i1': 'int8', '<i2': 'int16', '<u2': 'uint16', '<f2': 'float16',
                 '<u4': 'uint32', '<u8': 'uint64' };
const ARRAYS = { float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
                 bool: Uint8Array, uint8: Uint8Array, int8: Int8Array, int16: Int16Array, uint16: Uint16Array,
                 float16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array };

function readNpy(file) {
  const b = fs.readFileSync(file);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const at = major === 1 ? 10 : 12;
  const header = b.slice(at, at + hlen).toString('latin1');
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const type = DTYPES[descr];
  if (!type) throw new Error(`${file}: dtype ${descr}`);
  const data = b.slice(at + hlen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return new ort.Tensor(type, new ARRAYS[type](copy.buffer), shape);
}

function writeNpy(file, t) {
  const descr = Object.keys(DTYPES).find((k) => DTYPES[k] === t.type);
  if (!descr) throw new Error(`output type ${t.type}`);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = (64 - ((10 + header.length + 1) % 64)) % 64;
  header += ' '.repeat(pad) + '\n';
  const h = Buffer.alloc(10);
  h.write('\x93NUMPY', 0, 'latin1');
  h[6] = 1; h[7] = 0; h.writeUInt16LE(header.length, 8);
  const data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([h, Buffer.from(header, 'latin1'), data]));
}

function fileName(name) {
  const s = name.replace(/[^A-Za-z0-9_.-]/g, '_');
  return (s || 'output') + '.npy';
}

async function main() {
  const [model, outDir, ...args] = process.argv.slice(2);
  const optimize = args.includes('--optimize');
  let repeat = 0, threads = 1; // intra-op threads (1: runs are compared one thread against one)
  const rest = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--optimize') continue;
    if (args[i] === '--repeat') { repeat = Number(args[++i]); continue; }
    if (args[i] === '--threads') { threads = Number(args[++i]); continue; }
    rest.push(args[i]);
  }
  const feeds = {};
  for (const spec of rest) {
    const i = spec.indexOf('=');
    feeds[spec.slice(0, i)] = readNpy(spec.slice(i + 1));
  }
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: optimize ? 'all' : 'disabled', intraOpNumThreads: threads, interOpNumThreads: 1 });
  const out = await session.run(feeds);
  if (outDir !== '-') {
    fs.mkdirSync(outDir, { recursive: true });
    for (const name of session.outputNames) writeNpy(path.join(outDir, fileName(name)), out[name]);
  }
  if (repeat > 0) {
    const times = [];
    for (let r = 0; r < repeat; ++r) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const h = times.length >> 1;
    const median = times.length % 2 ? times[h] : (times[h - 1] + times[h]) / 2;
    process.stdout.write(JSON.stringify({ median_ms: median, repeat }) + '\n');
  }
}

main().catch((e) => { process.stderr.write(`run_npy: ${e.message}\n`); process.exit(1); });
