#!/usr/bin/env bash
# Runs every libFuzzer harness (tests/fuzz: wire, infer, text, expr, graph, eval) for SECONDS each, one
# harness after another, each as JOBS processes at once (one per core), in a clang ASan + UBSan
# build, and keeps what they learn:
#   fuzz/corpus/<harness>/    the corpus (seeded on first use: ONNX's node tests, the shipped and
#                             malformed models, small dev models, the golden graphs); each process
#                             writes to its own directory beside it (its own seed), merged into the
#                             corpus at the end
#   fuzz/crashes/<harness>/   crashes, leaks, timeouts, out-of-memory inputs (pin each in tests/)
#   fuzz/log/<harness>.<k>.log  libFuzzer's output per process; a summary line per harness is
#                             printed with the CPU seconds of all its processes
# usage: scripts/fuzz.sh [-j JOBS] [SECONDS=60] [HARNESS...]   (JOBS defaults to 1; FUZZ_BUILD=dir
#        reuses a configured build; FUZZ_NO_BUILD=1 runs the harnesses as last built;
#        FUZZ_TIMEOUT=S: seconds one input may take, default 10; raise
#        it on a loaded machine, where a starved run reports false timeouts)
# Exit 1 if any process stopped on a finding.
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=1
if [ "${1:-}" = "-j" ]; then JOBS=${2:?-j needs a number}; shift 2; fi
case $JOBS in ''|*[!0-9]*|0) echo "fuzz.sh: -j expects a positive number, got '$JOBS'" >&2; exit 2 ;; esac
SECONDS_EACH=${1:-60}; shift || true
HARNESSES=("$@"); [ ${#HARNESSES[@]} -eq 0 ] && HARNESSES=(wire infer text expr graph eval)
B=${FUZZ_BUILD:-build-fuzz}
if [ ! -f "$B/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSF_FUZZ=ON -DSF_SANITIZE=ON -DSF_BUILD_BENCH=OFF -DSF_BUILD_TESTS=ON >/dev/null || exit 2
fi
# FUZZ_NO_BUILD=1 runs the harnesses as last built (sources edited since are not rebuilt).
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  ninja -C "$B" $(printf 'fuzz_%s ' "${HARNESSES[@]}") >/dev/null || exit 2
fi

seed() { # harness dir
  local h=$1 d=$2 i=0
  mkdir -p "$d"
  [ -n "$(ls -A "$d" 2>/dev/null)" ] && return
  case $h in
    wire|infer)
      for m in /usr/share/libonnx-testdata/data/node/*/model.onnx /usr/share/libonnx-testdata/data/simple/*/model.onnx \
               tests/onnx/data/*.onnx tests/onnx/malformed/*.onnx tests/regress/*.onnx examples/*.onnx; do
        [ -f "$m" ] && cp "$m" "$d/seed_$((i++)).onnx"
      done
      for m in dev_models/*.onnx; do # the small ones: max_len cuts the rest
        [ -f "$m" ] && [ "$(stat -c %s "$m")" -lt 262144 ] && cp "$m" "$d/seed_$((i++)).onnx"
      done ;;
    text)
      /usr/bin/python3 - "$d" <<'PY'
import glob, os, sys
out, i = sys.argv[1], 0
for f in sorted(glob.glob("tests/golden/**/*.txt", recursive=True)):
    for case in open(f).read().split("// -----"):
        text = "\n".join(l for l in case.splitlines() if not l.lstrip().startswith("//"))
        if "graph" in text:
            open(os.path.join(out, "case_%04d.txt" % i), "w").write(text + "\n"); i += 1
PY
      ;;
    expr)
      i=0
      for t in "N" "(H - 1)//2 + 1" "min(T, 512)" "2*S + 1" "?{1..8}" "floor(H * 0.5)" "max(N - 3, 0) + 7" "N*H*W % 32"; do
        printf '%s' "$t" > "$d/seed_$((i++))"
      done ;;
    graph|eval) head -c 64 /dev/urandom > "$d/seed_0" ;;
  esac
}

mkdir -p fuzz/log
status=0
for h in "${HARNESSES[@]}"; do
  corpus=fuzz/corpus/$h; crashes=fuzz/crashes/$h
  seed "$h" "$corpus"; mkdir -p "$crashes"
  maxlen=65536; [ "$h" = expr ] && maxlen=512; { [ "$h" = graph ] || [ "$h" = eval ]; } && maxlen=4096
  pids=()
  for k in $(seq 1 "$JOBS"); do
    mkdir -p "$corpus.$k"
    # New inputs go to the process's own directory (first); it reads the shared corpus too.
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      /usr/bin/time -f '%U %S' -o "fuzz/log/$h.$k.time" "$B/tests/fuzz/fuzz_$h" "$corpus.$k" "$corpus" \
      -seed=$((RANDOM * 32768 + RANDOM + k)) -max_total_time="$SECONDS_EACH" -max_len=$maxlen \
      -timeout=${FUZZ_TIMEOUT:-10} -rss_limit_mb=2048 -malloc_limit_mb=2048 -artifact_prefix="$crashes/" \
      -print_final_stats=1 > "fuzz/log/$h.$k.log" 2>&1 &
    pids+=($!)
  done
  rcs=()
  for p in "${pids[@]}"; do wait "$p"; rcs+=($?); done
  # Every process's new inputs into the corpus (libFuzzer keeps those that add coverage).
  merge_dirs=()
  for k in $(seq 1 "$JOBS"); do merge_dirs+=("$corpus.$k"); done
  "$B/tests/fuzz/fuzz_$h" -merge=1 -max_len=$maxlen "$corpus" "${merge_dirs[@]}" > "fuzz/log/$h.merge.log" 2>&1 \
    && rm -rf "${merge_dirs[@]}"
  cpu=0; execs=0; worst=0
  for k in $(seq 1 "$JOBS"); do
    c=$(tail -1 "fuzz/log/$h.$k.time" 2>/dev/null | awk '{ printf "%d", $1 + $2 }')
    e=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "fuzz/log/$h.$k.log" | grep -o '[0-9]*$')
    cpu=$((cpu + ${c:-0})); execs=$((execs + ${e:-0}))
    rc=${rcs[$((k - 1))]}
    if [ "$rc" -ne 0 ]; then
      worst=$rc; status=1
      echo "fuzz_$h process $k: rc=$rc"
      grep -E 'ERROR|SUMMARY|property violated|Test unit written' "fuzz/log/$h.$k.log" | head -5
    fi
  done
  last=$(grep -E '^#[0-9]+.*(cov|DONE)' "fuzz/log/$h.1.log" | tail -1)
  size=$(ls "$corpus" | wc -l)
  echo "fuzz_$h: ${JOBS} x ${SECONDS_EACH}s (${cpu} CPU s), ${execs} inputs, rc=$worst, $(echo "$last" | grep -o 'cov: [0-9]*') $(echo "$last" | grep -o 'ft: [0-9]*') (process 1), corpus ${size} files"
done
exit $status
