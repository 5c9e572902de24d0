#!/usr/bin/env node
// Writes onnxruntime's own optimised model (the graph after its graph transformations, dims kept
// dynamic) for a comparison of node counts with `shapeflow simplify` (scripts/simplify_check.py).
// usage: node optimize.js MODEL OUT [basic|extended|all]
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

async function main() {
  const [model, out, level = 'basic'] = process.argv.slice(2);
  await ort.InferenceSession.create(model, {
    graphOptimizationLevel: level, optimizedModelFilePath: out, intraOpNumThreads: 1,
    executionProviders: ['cpu'],
  });
}
main().catch((e) => { console.error(`optimize: ${e.message}`); process.exit(1); });
