#!/usr/bin/env bash
# The Python test venv (NumPy, JAX, PyTorch 2.13.0 and its CUDA wheels, maturin, pytest),
# made once per set of pinned requirements and cached outside the clone. Links `.venv` to it
# and `.libtorch` to its torch, which feature `tch` builds against (`.cargo/config.toml`).
# `scripts/test.sh` and `.ci/run` run it before anything builds (`--all-features` has `tch`).
set -euo pipefail
cd "$(dirname "$0")/.."
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
# torch-sys (feature `tch`) builds against this torch: its headers and libraries.
torch_dir=$("$venv/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
if [ "$(readlink .libtorch 2>/dev/null)" != "$torch_dir" ]; then
  rm -rf .libtorch
  ln -s "$torch_dir" .libtorch
fi
