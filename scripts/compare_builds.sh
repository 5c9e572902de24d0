#!/usr/bin/env bash
# Compares what two shapeflow binaries print for the same models (a refactoring must not change
# it): `infer --json` and the text listing, on every model given (default: dev_models/*.onnx and
# the golden graphs are covered by the test suite), symbolic and with each model's first size set
# from scripts/precision_sizes.json. Prints the models that differ; exit 1 if any.
# usage: scripts/compare_builds.sh OLD_BINARY NEW_BINARY [MODEL...]
set -uo pipefail
old=$1 new=$2; shift 2
cd "$(dirname "$0")/.."
models=("$@"); [ ${#models[@]} -eq 0 ] && models=(dev_models/*.onnx dev_models/extra/*.onnx)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
differ=0
for m in "${models[@]}"; do
  [ -f "$m" ] || continue
  name=$(basename "$m" .onnx)
  args=$(/usr/bin/python3 - "$name" <<'PY'
import json, sys
sizes = {}
for f in ("scripts/precision_sizes.json", "scripts/precision_sizes_extra.json"):
    try: sizes.update(json.load(open(f)))
    except FileNotFoundError: pass
s = sizes.get(sys.argv[1])
print(" ".join("--dim %s=%d" % kv for kv in s[0].items()) if isinstance(s, list) else "")
PY
)
  for variant in "" "$args"; do
    for mode in --json ""; do
      "$old" infer "$m" $variant $mode > "$tmp/old" 2>&1; ro=$?
      "$new" infer "$m" $variant $mode > "$tmp/new" 2>&1; rn=$?
      if [ $ro -ne $rn ] || ! cmp -s "$tmp/old" "$tmp/new"; then
        echo "DIFFERS: $m $variant $mode (exit $ro vs $rn)"; diff "$tmp/old" "$tmp/new" | head -5 | cut -c1-200
        differ=1
      fi
    done
  done
done
[ $differ -eq 0 ] && echo "same output on ${#models[@]} models"
exit $differ
