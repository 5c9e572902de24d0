#!/usr/bin/env bash
# The malformed and impossible models table of the README: runs `shapeflow infer` on every file of
# tests/onnx/malformed/ and tests/regress/ and prints, per file, the exit status, the first error
# or warning, the wall time and the peak resident memory (GNU time). Exit 1 if any run takes 1 s
# or more, 200 MB or more, or crashes (exit status other than 0, 1, 2).
# usage: scripts/malformed_table.sh [SHAPEFLOW]
set -uo pipefail
cd "$(dirname "$0")/.."
SF=${1:-build/src/cli/shapeflow}
bad=0
echo "| file | exit | what shapeflow says | time | peak RSS |"
echo "|---|---:|---|---:|---:|"
for f in tests/onnx/malformed/*.onnx tests/regress/*.onnx tests/regress/*.graph; do
  stats=$(/usr/bin/time -f '%e %M' "$SF" infer "$f" 2>&1 >/dev/null | tail -1)
  "$SF" infer "$f" >/dev/null 2>&1; rc=$?
  msg=$( { "$SF" infer "$f" 2>&1 >/dev/null; "$SF" infer "$f" 2>/dev/null | grep -aE '^(error|warning): '; } | head -1 | tr -c '[:print:]\n' '?' | sed "s|$f: ||; s/|/ /g" | cut -c1-110)
  secs=${stats% *}; kb=${stats#* }
  echo "| $(basename "$f") | $rc | ${msg:-(clean)} | ${secs} s | $((kb / 1024)) MB |"
  if [ "$rc" -gt 2 ] || awk -v s="$secs" -v k="$kb" 'BEGIN { exit !(s >= 1 || k >= 200*1024) }'; then bad=1; fi
done
exit $bad
