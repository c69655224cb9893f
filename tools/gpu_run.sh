#!/usr/bin/env bash
# The GPU check, in one call on a CUDA machine whose Python already has torch
# (a base the slices have series for: the GPU image's is the base whose role is
# "gpu" in shared/src/rfc_shared/bases.toml) and triton:
#   1. installs the project's packages from this tree into that Python, with
#      no network: the build backend and small dependencies come from a
#      wheelhouse made beforehand on a networked machine with
#        python -m pip download -d .wheelhouse --only-binary=:all: hatchling unidiff expecttest
#   2. builds torch_acc with its CUDA extension,
#   3. checks that the stacked overlay is served,
#   4. runs the GPU tests (acc over CUDA memory, corpus end to end vs cuda) and,
#      in parallel, upstream's CUDA tests of the modules the slices touch (the
#      base's test/inductor files in rfc_shared's landed_tests) on stock torch
#      and then stacked, and compares their outcomes (tools/compare_outcomes.py),
#   5. benchmarks compiled acc vs compiled cuda and prints the table last;
#   with STEPS naming "traces", first records a profiler trace of each row of
#   TRACE_WORKLOADS (texts of row names separated by |, each naming one row) on each
#   device, one process at a time with the GPU otherwise idle (upstream's tests wait),
#   and prints their GPU kernels and launch configurations side by side
#   (RESULTS_DIR/traces/, traces.md); with STEPS naming "warm", compiles the benchmark's
#   selected rows in the background while the tests run (warm.log), so that a later
#   call's benchmark on the same machine finds the compile caches full.
# Usage: tools/gpu_run.sh [RESULTS_DIR]    (PYTHON, WHEELHOUSE override defaults;
#   STEPS="tests upstream bench" by default: any of them alone where one call has too little
#   time for all, and "traces"; TESTS_K: pytest's -k for the GPU tests (UPSTREAM_TIMEOUT: seconds for the upstream tests, both sides at once, default 420);
#   BENCH_SECTIONS, BENCH_WORKLOADS, BENCH_WARM: the benchmark's --sections (default all),
#   --workloads (texts of row names, alternatives separated by |) and --warm (compile
#   processes at a time before the timed runs; default: the cores / 2); BENCH_ARGS: more
#   of the benchmark's options (--repeat N, --first-call-profile);
#   ACC_WHEEL: a torch_acc wheel an earlier run built (RESULTS_DIR/wheel/), installed
#   instead of building again when its extension's sources are this tree's (the digest
#   beside it says); this tree's Python files replace the wheel's;
#   merge the bench.json files of several runs with
#     python torch_acc/benchmarks/gpu.py --render A.json B.json)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RESULTS=${1:-$ROOT/gpu-results}
WHEELHOUSE=${WHEELHOUSE:-$ROOT/.wheelhouse}
PY=${PYTHON:-python3}
# The engine and every slice: each top-level folder with a pyproject.toml but the test backends.
PACKAGES=()
for project in "$ROOT"/*/pyproject.toml; do
  folder=$(dirname "$project")
  case "$(basename "$folder")" in torch_acc | torch_sealed) ;; *) PACKAGES+=("$folder") ;; esac
done
mkdir -p "$RESULTS"

step() { echo "[gpu_run $(date +%H:%M:%S)] $*" >&2; }

step "$($PY -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)')"
step "installing the project's packages (no network; wheelhouse: $WHEELHOUSE)"
pip_install() { $PY -m pip install -q --no-index --find-links "$WHEELHOUSE" "$@"; }
pip_install hatchling expecttest
pip_install --no-build-isolation "${PACKAGES[@]}"
# Optional: the benchmark's Hugging Face rows need transformers, from the
# wheelhouse with its dependencies (python -m pip download -d .wheelhouse
# --only-binary=:all: "transformers<5"); without it those rows report the import error.
if compgen -G "$WHEELHOUSE/transformers-*.whl" >/dev/null; then
  step "installing transformers (the Hugging Face rows)"
  pip_install transformers || step "transformers could not be installed: its rows will fail"
fi
STEPS=${STEPS:-tests upstream bench}
# The rows to trace, each recorded alone on the GPU after torch_acc is built:
# a kernel's first call autotunes it, and a choice timed beside other GPU work
# is noise that the cache then keeps (trace_workload.py drops earlier choices).
trace_rows=()
record_trace() {  # DEVICE INDEX: one row's trace on one device, in a process of its own
  (if [ "$1" = cuda ]; then unset TORCH_ACC_MODE; fi
   cd "$RESULTS" && $PY "$ROOT/torch_acc/benchmarks/trace_workload.py" record "$1" \
    "${trace_rows[$2]}" "traces/row$2-$1.json.gz" >"traces/row$2-$1.log" 2>&1 \
    || echo "record $1 failed" >>"traces/row$2-$1.log")
}
if [[ " ${STEPS:-} " == *" traces "* ]]; then
  IFS='|' read -ra trace_rows <<<"${TRACE_WORKLOADS:?STEPS has traces: name the rows in TRACE_WORKLOADS}"
  mkdir -p "$RESULTS/traces"
fi
# Upstream's tests need no backend: they run while torch_acc builds, or, where
# traces are recorded, once they are (the traces want the GPU alone).
upstream_pid=
start_upstream() {
  [[ " $STEPS " == *" upstream "* ]] || return 0
  landed=$($PY -c 'from rfc_shared.overlay.base import installed_torch_base as b; print(b().landed_tests_dir)')
  step "upstream's CUDA tests ($landed/test/inductor), stock and stacked side by side, in the background"
  # Interrupted at the time limit, pytest still writes the report of what it ran.
  for side in none all; do
    (
      TORCH_RFC_SLICES=$side timeout -s INT "${UPSTREAM_TIMEOUT:-420}" $PY -m pytest -q \
        -p no:cacheprovider --rootdir "$landed" --junitxml="$RESULTS/upstream-$side.xml" \
        "$landed/test/inductor" >"$RESULTS/upstream-$side.log" 2>&1
      echo "exit $? ($side)" >>"$RESULTS/upstream-$side.log"
    ) &
    upstream_pid="$upstream_pid $!"
  done
}
if [ ${#trace_rows[@]} -eq 0 ]; then start_upstream; fi
# The extension's sources, as one digest: a reused wheel must have been built from these.
csrc_digest() { (cd "$ROOT/torch_acc" && find csrc setup.py -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1); }
if [ -n "${ACC_WHEEL:-}" ]; then
  built_from=$(cat "$ACC_WHEEL.csrc-sha256" 2>/dev/null || echo unknown)
  if [ "$built_from" != "$(csrc_digest)" ]; then
    echo "error: $ACC_WHEEL was not built from this tree's torch_acc/csrc (its $ACC_WHEEL.csrc-sha256: $built_from); build again without ACC_WHEEL" >&2
    exit 2
  fi
  step "installing torch_acc from $ACC_WHEEL, with this tree's Python files"
  pip_install --no-deps --force-reinstall "$ACC_WHEEL"
  # Only the extension is reused: the Python packages are copied from this
  # tree over the wheel's (links followed, as the wheel materializes them).
  for package in torch_acc torch_acc_triton; do
    installed=$($PY -c "import importlib.util as u; print(u.find_spec('$package').submodule_search_locations[0])")
    cp -rL "$ROOT/torch_acc/$package/." "$installed/"
  done
else
  step "building torch_acc with CUDA ($(nproc) jobs)"
  MAX_JOBS=$(nproc) $PY -m pip wheel -q --no-index --find-links "$WHEELHOUSE" --no-deps \
    --no-build-isolation -w "$RESULTS/wheel" "$ROOT/torch_acc"
  for wheel in "$RESULTS"/wheel/torch_acc-*.whl; do csrc_digest > "$wheel.csrc-sha256"; done
  pip_install --no-deps --force-reinstall "$RESULTS"/wheel/torch_acc-*.whl
fi

cd "$RESULTS"  # never import from the source tree
step "overlay"
$PY -m rfc_shared status --import-torch --expect-closure all | tee overlay.json
export TORCH_ACC_MODE=cuda

if [ ${#trace_rows[@]} -gt 0 ]; then
  step "recording the traces of ${#trace_rows[@]} rows, one process at a time"
  for i in "${!trace_rows[@]}"; do
    record_trace cuda "$i"
    record_trace acc "$i"
  done
  for i in "${!trace_rows[@]}"; do
    echo "## ${trace_rows[$i]}"
    echo '```'
    grep -h "ms/step\|failed\|Error" "traces/row$i-cuda.log" "traces/row$i-acc.log" || true
    $PY "$ROOT/torch_acc/benchmarks/trace_workload.py" kernels \
      "traces/row$i-cuda.json.gz" "traces/row$i-acc.json.gz" --top 30 || true
    echo '```'
  done >traces.md
  cat traces.md
fi

if [ ${#trace_rows[@]} -gt 0 ]; then start_upstream; fi
warm_pid=
if [[ " $STEPS " == *" warm "* ]]; then
  step "compiling the benchmark's rows in the background (warm.log)"
  $PY "$ROOT/torch_acc/benchmarks/gpu.py" --warm-only --workloads "${BENCH_WORKLOADS:-}" \
    --warm "${BENCH_WARM:-$(($(nproc) / 2))}" >warm.log 2>&1 &
  warm_pid=$!
fi

tests=0
if [[ " $STEPS " == *" tests "* ]]; then
  step "GPU tests"
  set +e
  $PY -m pytest -q -p no:cacheprovider -p rfc_shared.testing.plugin --privateuse1-backend torch_acc \
    ${TESTS_K:+-k "$TESTS_K"} \
    "$ROOT/torch_acc/tests/test_cuda_mode.py" \
    "$ROOT/torch_acc/tests/test_gpu_machine.py" \
    "$ROOT/torch_acc/tests/test_zero_monkeypatch.py" \
    "$ROOT/torch_acc/tests/test_workloads.py" \
    2>&1 | tee tests.log
  tests=${PIPESTATUS[0]}
  set -e
fi

if [ -n "$warm_pid" ]; then
  wait "$warm_pid" || step "compiling the benchmark's rows failed (warm.log)"
fi

if [[ " $STEPS " == *" bench "* ]]; then
  step "benchmark"
  $PY "$ROOT/torch_acc/benchmarks/gpu.py" --json bench.json \
    --sections "${BENCH_SECTIONS:-kernels,allocation,launch-bound,workloads}" \
    --workloads "${BENCH_WORKLOADS:-}" --warm "${BENCH_WARM:-$(($(nproc) / 2))}" \
    ${BENCH_ARGS:-} > bench.md
fi
if [ -n "$upstream_pid" ]; then
  wait $upstream_pid || true
  step "upstream's tests, stock against stacked"
  set +e
  $PY "$ROOT/tools/compare_outcomes.py" upstream-none.xml upstream-all.xml | tee upstream.md
  upstream=${PIPESTATUS[0]}
  set -e
  [ "$upstream" = 0 ] || tests=1
fi
if [[ " $STEPS " == *" tests "* ]]; then
  step "tests: $( [ "$tests" = 0 ] && echo passed || echo FAILED ) ($(tail -1 tests.log))"
fi
[ -f bench.md ] && cat bench.md
exit "$tests"
