#!/usr/bin/env node
// Runs each model given with onnxruntime (CPU, graph optimisations off) and prints one JSON line
// per model: {"model": path, "ok": true} or {"model": path, "ok": false, "error": "..."}. Graph
// inputs are fed from MODEL.feed.json beside the model ({"name": value}: every element that
// value, the input's declared shape) when present. What a runtime accepts is the ground truth for
// shapeflow's errors (scripts/probe_one_element.py).
'use strict';
const fs = require('fs');
const ort = require(require('path').join(__dirname, 'node_modules', 'onnxruntime-node'));

function tensor(type, value, dims) {
  const n = dims.reduce((a, b) => a * b, 1);
  switch (type) {
  case 'int64':
    return new ort.Tensor('int64', new BigInt64Array(n).fill(BigInt(value)), dims);
  case 'int32':
    return new ort.Tensor('int32', new Int32Array(n).fill(value), dims);
  case 'bool':
    return new ort.Tensor('bool', new Uint8Array(n).fill(value ? 1 : 0), dims);
  default:
    return new ort.Tensor('float32', new Float32Array(n).fill(value), dims);
  }
}

async function runOne(model) {
  try {
    const session = await ort.InferenceSession.create(model, {graphOptimizationLevel : 'disabled'});
    const feedFile = model + '.feed.json';
    const feed = {};
    if (fs.existsSync(feedFile)) {
      const spec = JSON.parse(fs.readFileSync(feedFile, 'utf8'));
      for (const [name, {type, value, dims}] of Object.entries(spec))
        feed[name] = tensor(type, value, dims);
    }
    await session.run(feed);
    return {model, ok : true};
  } catch (e) { return {model, ok : false, error : String(e.message || e).split('\n')[0]}; }
}

(async () => {
  for (const m of process.argv.slice(2))
    process.stdout.write(JSON.stringify(await runOne(m)) + '\n');
})();
