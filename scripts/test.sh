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

# --- Python module and its pytest suite ---------------------------------------------------
# A venv with the released NumPy, JAX (CPU) and PyTorch our capsules must satisfy, the module
# built into it by maturin, then pytest. `./scripts/test.sh --test X` skips this part.
if [ $# -eq 0 ]; then
  py=${PYTHON:-python3}
  # PyPI's Linux torch wheel pulls ~2.7 GB of CUDA wheels that its libraries link against, and
  # a download cut short has failed CI before. The venv therefore lives outside the clone, in
  # a cache keyed by the pinned requirements (`DLARRAY_VENV` overrides the place): a machine
  # that has it downloads nothing; a fresh one builds it. The wheels are first downloaded into
  # a folder (pip resumes a cut download, and a retried `pip download` keeps the files that
  # arrived), one line per wheel, then installed from it offline. `.venv` links to it.
  reqs=(maturin==1.16.0 pytest==9.2.0 numpy==2.4.6 "jax[cpu]==0.10.2" torch==2.13.0)
  key=$(printf '%s\n' "${reqs[@]}" "$("$py" -c 'import sys; print(sys.version)')" | sha256sum | cut -c1-12)
  venv=${DLARRAY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/dlarray/venv-$key}
  # A cached venv that no longer imports what it should is rebuilt from scratch.
  if [ -f "$venv/.dlarray-reqs" ] &&
     ! "$venv/bin/python" -c 'import numpy, jax, torch, maturin, pytest' >/dev/null 2>&1; then
    echo "== cached venv $venv is broken: rebuilding it"
    rm -rf "$venv"
  fi
  if [ ! -x "$venv/bin/python" ]; then
    mkdir -p "$(dirname "$venv")"
    "$py" -m venv "$venv" 2>/dev/null || {
      if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
      $sudo apt-get install -y -qq python3-venv && "$py" -m venv "$venv"
    }
  fi
  if [ "$(cat "$venv/.dlarray-reqs" 2>/dev/null)" != "${reqs[*]}" ]; then
    echo "== building the Python test venv in $venv (downloads ~2.7 GB once)"
    retry() {
      local attempt
      for attempt in 1 2 3 4; do
        "$@" && return 0
        echo "failed (attempt $attempt of 4): $*; retrying in $((attempt * 15)) s" >&2
        sleep $((attempt * 15))
      done
      return 1
    }
    pip=("$venv/bin/python" -m pip)
    retry "${pip[@]}" install -q --retries 10 --timeout 60 --upgrade pip
    # --no-cache-dir: the wheels are kept in one place only (pip's cache would hold a second
    # copy of ~3 GB). Not -q: pip names each wheel as it downloads (the progress in a log).
    retry "${pip[@]}" download --progress-bar off --no-cache-dir --retries 10 --timeout 60 \
      --resume-retries 20 -d "$venv/wheels" "${reqs[@]}"
    # Installed one file at a time, each deleted once in, so the disk never holds every wheel
    # and all of site-packages at once (~2 GB less at the peak). `pip download` resolved the
    # set, so --no-deps installs exactly it; `pip check` confirms nothing is missing.
    for w in "$venv"/wheels/*; do
      echo "installing $(basename "$w")"
      "${pip[@]}" install -q --no-cache-dir --no-index --no-deps "$w"
      rm -f "$w"
    done
    "${pip[@]}" check
    rm -rf "$venv/wheels"
    echo "${reqs[*]}" >"$venv/.dlarray-reqs"
  fi
  if [ "$(readlink .venv 2>/dev/null)" != "$venv" ]; then
    rm -rf .venv
    ln -s "$venv" .venv
  fi
  # Every generated GPU kernel compiles with NVRTC, the compiler library of the venv's CUDA
  # wheels (torch's `nvidia-cuda-nvrtc`): no GPU needed, and a missing NVRTC fails the run.
  echo "== NVRTC: every generated GPU kernel"
  VIRTUAL_ENV="$venv" DLARRAY_REQUIRE="${DLARRAY_REQUIRE},nvrtc" \
    cargo test --all-features --test nvrtc_kernels -- --nocapture 2>&1 | grep -Ev '^\s*$'
  (cd python && VIRTUAL_ENV="$PWD/../.venv" PATH="$PWD/../.venv/bin:$PATH" maturin develop -q)
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
# device memory, the fuzz corpus replay, the 8-thread stress test): run them under valgrind
# memcheck; any error or definite leak fails the run.
if [ $# -eq 0 ]; then
  bins=$(cargo test --all-features --no-run --message-format=json \
           --test dlpack_import --test dlpack_export --test dlpack_policy \
           --test async_contract --test fuzz_replay --test stress 2>/dev/null |
         grep -Eo '"executable":"[^"]*(dlpack_|async_contract|fuzz_replay|stress)[^"]*"' |
         cut -d'"' -f4)
  [ "$(echo "$bins" | wc -w)" -eq 6 ] || { echo "memcheck test binaries missing: $bins" >&2; exit 1; }
  for b in $bins; do
    echo "== valgrind memcheck: $(basename "$b")"
    # Host backends only: the GPU drivers' own allocations are not ours to check.
    DLARRAY_BACKENDS=cpu,tpu DLARRAY_REQUIRE=cpu,tpu \
    valgrind -q --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite --show-leak-kinds=definite "$b" --test-threads=2
  done
fi
