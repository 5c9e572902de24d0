#!/usr/bin/env node
// Runs one model with onnxruntime (CPU, one thread, graph optimisations off) on each of a list of
// feeds and prints one JSON line per feed: {"ok": true} or {"ok": false, "error": "..."}.
// For scripts/contract_check.py: which input sizes a runtime accepts.
// usage: node run_feeds.js MODEL FEEDS.json
//   FEEDS.json: [{"name": {"type": "float32"|"int64"|"int32"|"bool", "value": v, "dims": [...]}}, ...]
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

const ARRAYS = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array };

function tensor({type, value, dims}) {
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new ARRAYS[type](n).fill(type === 'int64' ? BigInt(value) : value);
  return new ort.Tensor(type, data, dims);
}

(async () => {
  const [model, feedsFile] = process.argv.slice(2);
  const feeds = JSON.parse(fs.readFileSync(feedsFile, 'utf8'));
  let session;
  try {
    session = await ort.InferenceSession.create(
        model, {graphOptimizationLevel : 'disabled', intraOpNumThreads : 1, logSeverityLevel : 4});
  } catch (e) {
    for (const _ of feeds) console.log(JSON.stringify({ok : false, error : 'session: ' + String(e.message || e).split('\n')[0]}));
    return;
  }
  for (const spec of feeds) {
    try {
      const feed = {};
      for (const [name, t] of Object.entries(spec)) feed[name] = tensor(t);
      await session.run(feed);
      console.log(JSON.stringify({ok : true}));
    } catch (e) {
      console.log(JSON.stringify({ok : false, error : String(e.message || e).split('\n')[0].slice(0, 300)}));
    }
  }
})();
