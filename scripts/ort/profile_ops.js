#!/usr/bin/env node
// onnxruntime's time per op type, for comparison with `shapeflow run --profile`: the model run
// R + 1 times with profiling on (one intra-op thread; graph optimisations on unless "off"), on
// one f32 input of SHAPE filled with sin(i); prints the median session run and, per op type of
// the graph onnxruntime ran (its fused and layout ops included), the kernel milliseconds per run.
// usage: node scripts/ort/profile_ops.js MODEL D0,D1,... [R=10] [on|off]
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

async function main() {
  const [model, shapeArg, repsArg, opt] = process.argv.slice(2);
  if (!model || !shapeArg) throw new Error('usage: profile_ops.js MODEL D0,D1,... [R] [on|off]');
  const shape = shapeArg.split(',').map(Number);
  const reps = Number(repsArg || 10);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: opt === 'off' ? 'disabled' : 'all',
    enableProfiling: true, profileFilePrefix: path.join(dir, 'ort')});
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; ++i) data[i] = Math.sin(i);
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
  for (let i = 0; i < reps + 1; ++i) await session.run(feeds);
  if (session.endProfiling) await session.endProfiling();
  const file = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => path.join(dir, f))[0];
  const events = JSON.parse(fs.readFileSync(file));
  const byOp = {};
  const runs = [];
  for (const e of events) {
    if (e.cat === 'Node' && e.name.endsWith('_kernel_time')) byOp[e.args.op_name] = (byOp[e.args.op_name] || 0) + e.dur;
    if (e.cat === 'Session' && e.name === 'model_run') runs.push(e.dur);
  }
  runs.sort((a, b) => a - b);
  console.log(`median session run ${(runs[Math.floor(runs.length / 2)] / 1000).toFixed(2)} ms`);
  for (const [op, us] of Object.entries(byOp).sort((a, b) => b[1] - a[1]))
    console.log(`${op.padEnd(28)} ${(us / (reps + 1) / 1000).toFixed(2)} ms per run`);
  fs.rmSync(dir, {recursive: true, force: true});
}

main().catch((e) => { console.error(`profile_ops: ${e.message}`); process.exit(1); });
