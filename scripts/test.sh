#!/usr/bin/env bash
# The whole test suite. Installs what the tests need on Debian/Ubuntu (when run as root, or
# with sudo available), then runs every Rust test with the required backends enforced.
#
#   ./scripts/test.sh            # everything
#   ./scripts/test.sh --test ops # extra arguments go to `cargo test`
set -euo pipefail
cd "$(dirname "$0")/.."

# --- system packages the tests use -------------------------------------------------------
# A C compiler, valgrind, and the drivers of the backends CI requires: Mesa's lavapipe
# (a CPU Vulkan driver) and Mesa's EGL (wgpu's GL backend on llvmpipe) for wgpu.
need_pkgs=()
command -v cc >/dev/null || need_pkgs+=(build-essential)
command -v valgrind >/dev/null || need_pkgs+=(valgrind)
for p in mesa-vulkan-drivers libvulkan1 libegl-mesa0 libegl1; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_pkgs[@]}"
fi
command -v cargo >/dev/null || {
  echo "cargo not found: install Rust (https://rustup.rs) first" >&2
  exit 1
}

# --- the Python venv ------------------------------------------------------------------------
# pytest's NumPy, JAX and PyTorch, and the libtorch that feature `tch` (in --all-features)
# builds and links against: made once, cached outside the clone.
./scripts/venv.sh

# --- tests ---------------------------------------------------------------------------------
# Mesa's drivers want a private runtime directory (else they print a warning per process).
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/dlarray-xdg-$(id -u)"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fi
# Every backend listed here must be available, or the tests fail (no silent skips).
export DLARRAY_REQUIRE="${DLARRAY_REQUIRE:-cpu,tpu,wgpu}"
echo "DLARRAY_REQUIRE=$DLARRAY_REQUIRE"
cargo test --all-features "$@"
# The wgpu suite again with the Vulkan driver hidden: wgpu falls back to Mesa's GL, whose
# context lock panicked (and aborted the test binary) when two threads used it at once.
if [ $# -eq 0 ]; then
  echo "== wgpu suite on GL only (VK_ICD_FILENAMES hidden)"
  VK_ICD_FILENAMES=/nonexistent.json DLARRAY_REQUIRE=cpu,wgpu \
    cargo test --all-features --test wgpu --test wgpu_limits
fi

# --- candle and tch-rs interop: the examples the README runs ----------------------------
if [ $# -eq 0 ]; then
  echo "== interop examples"
  cargo run -q --all-features --example candle_interop
  cargo run -q --all-features --example tch_interop
fi

# --- Python module and its pytest suite ---------------------------------------------------
# A venv with the released NumPy, JAX (CPU) and PyTorch our capsules must satisfy, the module
# built into it by maturin, then pytest. `./scripts/test.sh --test X` skips this part.
if [ $# -eq 0 ]; then
  venv=$(readlink -f .venv)
  # Every generated GPU kernel compiles with NVRTC, the compiler library of the venv's CUDA
  # wheels (torch's `nvidia-cuda-nvrtc`): no GPU needed, and a missing NVRTC fails the run.
  echo "== NVRTC: every generated GPU kernel"
  VIRTUAL_ENV="$venv" DLARRAY_REQUIRE="${DLARRAY_REQUIRE},nvrtc" \
    cargo test --all-features --test nvrtc_kernels -- --nocapture 2>&1 | grep -Ev '^\s*$'
  (cd python && VIRTUAL_ENV="$PWD/../.venv" PATH="$PWD/../.venv/bin:$PATH" maturin develop -q --profile dev)
  .venv/bin/python -m pytest -q python/tests
  # The array API's own suite against the committed list of what still fails. It is vendored
  # beside the checkout (../shared/array-api-tests, or ARRAY_API_TESTS); where it is absent
  # the run says so, and fails if DLARRAY_REQUIRE names `array-api`.
  suite=${ARRAY_API_TESTS:-../shared/array-api-tests}
  if [ -d "$suite/array_api_tests" ]; then
    echo "== array API suite ($suite)"
    ARRAY_API_TESTS="$suite" ./scripts/array-api.sh
  elif [[ ",${DLARRAY_REQUIRE}," == *",array-api,"* ]]; then
    echo "array API suite not found at $suite, and DLARRAY_REQUIRE names array-api" >&2
    exit 1
  else
    echo "== array API suite: not found at $suite (set ARRAY_API_TESTS): not run"
  fi
fi

# --- memory checks -------------------------------------------------------------------------
# The test binaries that hand raw pointers across an FFI boundary (the DLPack suites, the
# ndarray interop in dlpack_export, the fake asynchronous backend's suite with its imported
# device memory, the fuzz corpus replay, the 8-thread stress test, candle's tensors and
# vectors changing hands): run them under valgrind
# memcheck; any error or definite leak fails the run.
if [ $# -eq 0 ]; then
  bins=$(cargo test --all-features --no-run --message-format=json \
           --test dlpack_import --test dlpack_export --test dlpack_policy \
           --test async_contract --test fuzz_replay --test stress --test candle_interop \
           2>/dev/null |
         grep -Eo '"executable":"[^"]*(dlpack_|async_contract|fuzz_replay|stress|candle_interop)[^"]*"' |
         cut -d'"' -f4)
  [ "$(echo "$bins" | wc -w)" -eq 7 ] || { echo "memcheck test binaries missing: $bins" >&2; exit 1; }
  for b in $bins; do
    echo "== valgrind memcheck: $(basename "$b")"
    # Host backends only: the GPU drivers' own allocations are not ours to check.
    DLARRAY_BACKENDS=cpu,tpu DLARRAY_REQUIRE=cpu,tpu \
    valgrind -q --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite --show-leak-kinds=definite "$b" --test-threads=2
  done
fi
