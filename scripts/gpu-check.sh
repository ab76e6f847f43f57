#!/usr/bin/env bash
# The checks that need the lent GPU machine (one NVIDIA H200, 16 cores; no Rust toolchain and
# no network there), in two steps:
#
#   ./scripts/gpu-check.sh build   here: builds what travels into .devbin/ (ignored by git)
#   ./scripts/gpu-check.sh run     there (device tool, carry [".devbin"]): runs the checks,
#                                  writes the log and JSON under $OUT and ends with a summary
#
# What it runs, each step under its own time limit so one hang cannot eat the lease:
#   1. the machine (GPU, driver, CPU) and `dlarray devices` (cuda must be available);
#   2. the CUDA backend's own tests, `tests/gpu_cuda.rs` (`#[ignore = "needs a CUDA GPU"]`);
#      the wgpu backend's tests (`tests/wgpu.rs`) on the GPU's Vulkan driver, and
#      `dlarray bench` of cpu, wgpu and cuda side by side;
#   3. `dlarray bench` on cuda:0: copies, DLPack, add, sum, exp, cast up to 256M elements,
#      matmul f32/bf16 up to 4096 (JSON to $OUT/bench-cuda.json);
#   4. `scripts/gpu_check.py`: DLPack both ways with PyTorch and JAX on the GPU (zero-copy,
#      stream order, memory handed back);
#   5. `scripts/gpu_bench.py`: issue 11's targets, dlarray beside PyTorch in one process.
set -uo pipefail
cd "$(dirname "$0")/.."

artifact() { # the executable cargo built for a test or bench target named $1
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$1"
}

build() {
  set -e
  mkdir -p .devbin
  grep -qx '/.devbin/' .git/info/exclude 2>/dev/null || echo '/.devbin/' >>.git/info/exclude
  cargo build --release --bin dlarray
  strip -o .devbin/dlarray target/release/dlarray
  local t
  t=$(cargo test --release --test gpu_cuda --no-run --message-format=json 2>/dev/null | artifact gpu_cuda)
  strip -o .devbin/gpu_cuda "$t"
  # The wgpu backend on the GPU's Vulkan driver: the machine has no Vulkan loader, so its
  # Debian package travels in .gl/ (see /work/.library/device/README.md).
  t=$(cargo test --release --test wgpu --no-run --message-format=json 2>/dev/null | artifact wgpu)
  strip -o .devbin/wgpu "$t"
  mkdir -p .gl
  grep -qx '/.gl/' .git/info/exclude || echo '/.gl/' >>.git/info/exclude
  ls .gl/libvulkan1_*.deb >/dev/null 2>&1 || (
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    mkdir -p /tmp/amd64/partial && apt-get $o update -qq && cd .gl && apt-get $o download libvulkan1
  )
  rm -f .devbin/*.whl
  # abi3: the lent machine's Python (3.12) differs from this one.
  (cd python && ../.venv/bin/maturin build --release --strip -q --features abi3 -o ../.devbin)
  du -sh .devbin/*
}

run() {
  local out="${OUT:-.}"
  exec > >(tee "$out/gpu-check.log") 2>&1
  local start=$SECONDS
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
  lscpu | grep -E 'Model name|^CPU\(s\)' || true
  # NVRTC and cuBLAS: the machine's toolkit, else every folder of torch's nvidia wheels.
  local libs
  libs=$(python3 -c 'import glob, site
print(":".join(d for p in site.getsitepackages() for d in glob.glob(p + "/nvidia/*/lib")))' 2>/dev/null)
  export DLARRAY_CUDA_LIBS="${libs}"
  echo "DLARRAY_CUDA_LIBS=$libs"
  # The Vulkan loader for wgpu (the NVIDIA driver brings the ICD).
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -f "$icd" ] && export VK_DRIVER_FILES="$icd"
  timeout 60 .devbin/dlarray devices
  echo "devices: rc=$?"
  echo "== CUDA tests ($((SECONDS - start)) s)"
  # One process per test, each with its own limit and its progress on stderr: a hang names
  # the test and the op.
  local t
  for t in pinned_memory_dlpack_and_moves random_draws_and_bitwise_ops_match_the_cpu \
    elementwise_reductions_casts_and_matmul_match_the_cpu; do
    DLARRAY_REQUIRE=cpu,cuda timeout 60 .devbin/gpu_cuda --ignored --exact "$t" --nocapture
    echo "cuda test $t: rc=$?"
  done
  echo "== wgpu on the GPU's Vulkan driver ($((SECONDS - start)) s)"
  DLARRAY_REQUIRE=cpu,wgpu timeout 120 .devbin/wgpu --test-threads 4
  echo "wgpu tests: rc=$?"
  timeout 60 .devbin/dlarray bench --backends cpu,wgpu,cuda --ops add,sum,exp,matmul \
    --sizes 1M,16M --samples 5 --json "$out/bench-backends.json"
  echo "bench backends: rc=$?"
  echo "== dlarray bench on cuda:0 ($((SECONDS - start)) s)"
  timeout 120 .devbin/dlarray bench --backends cuda --ops h2d,d2h,dlpack_export,dlpack_import,add,sum,exp,cast \
    --sizes 8,64K,1M,16M,256M --samples 5 --json "$out/bench-cuda.json"
  echo "bench: rc=$?"
  timeout 90 .devbin/dlarray bench --backends cuda --ops matmul --dtypes float32,bfloat16 \
    --sizes 64K,1M,16M --samples 3 --json "$out/bench-cuda-matmul.json"
  echo "bench matmul: rc=$?"
  echo "== Python: DLPack with PyTorch and JAX on the GPU ($((SECONDS - start)) s)"
  python3 -m pip install -q --no-index --no-deps --target /tmp/dlsite .devbin/dlarray-*.whl
  # JAX takes 75 % of the GPU at its first use unless told not to.
  export PYTHONPATH=/tmp/dlsite PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
  timeout 120 python3 scripts/gpu_check.py
  echo "python checks: rc=$?"
  echo "== Python: issue 11's targets beside PyTorch ($((SECONDS - start)) s)"
  timeout 120 python3 scripts/gpu_bench.py "$out/gpu-bench.json"
  echo "python bench: rc=$?"
  echo "== summary ($((SECONDS - start)) s)"
  grep -E '^(test result|devices: rc|cuda test |wgpu tests|bench|python (checks|bench): rc|FAIL|RATIO|[0-9]+ failed)' "$out/gpu-check.log"
}

case "${1:-}" in
  build) build ;;
  run) run ;;
  *) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
