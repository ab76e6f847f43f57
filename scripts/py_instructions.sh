#!/usr/bin/env bash
# Instructions per call of the Python DLPack exchanges the benchmarks issue targets, counted by
# valgrind's callgrind (exact on a noisy machine where ~400 ns calls are not), beside NumPy's
# own exchange of a NumPy array:
#
#   ./scripts/py_instructions.sh            # own, import, export (and the empty loop)
#   ./scripts/py_instructions.sh export 40000
#
#   own     np.from_dlpack(numpy array)
#   import  dlarray.from_dlpack(numpy array)
#   export  np.from_dlpack(dlarray Array)
#   loop    the loop and call of an empty lambda (subtract it for the net cost)
#
# With each count, the L1 instruction-cache misses of callgrind's cache model. These calls run
# dlarray's code between NumPy's and Python's own, ~320 lines of 64 bytes together: where a
# set of the 8-way cache gets more than 8 of them, each misses on every call (the export took
# 1.2-1.3x NumPy's time at 70 misses a call, 1.03-1.14x at 20-23, NumPy's own 23).
#
# Each count is (count(2N) - count(N)) / N. OpenBLAS's worker threads spin for a while after
# NumPy starts, and Python's hash seed and garbage collector shift work between runs: all
# three are pinned (OPENBLAS_NUM_THREADS=1, PYTHONHASHSEED=0, gc disabled), or the counts
# swing by hundreds of instructions. Needs the optimised module (`cd python && maturin develop
# --profile wheel`) in .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${2:-20000}
probe=$(mktemp --suffix=.py)
trap 'rm -f "$probe"' EXIT
cat >"$probe" <<'PY'
import gc, sys
import numpy as np
import dlarray
x = np.arange(256, dtype=np.float32)
d = dlarray.asarray(x)
f = {"own": lambda: np.from_dlpack(x), "import": lambda: dlarray.from_dlpack(x),
     "export": lambda: np.from_dlpack(d), "loop": lambda: None}[sys.argv[1]]
gc.disable()
for _ in range(int(sys.argv[2])):
    f()
PY
# A debug build's counts say nothing about the library: refuse it (python/bench/optimised.py).
DLARRAY_BACKENDS=cpu .venv/bin/python -c 'import sys; sys.path.insert(0, "python/bench")
import dlarray; from optimised import require_optimised; require_optimised(dlarray)'
# Prints "instructions I1-misses" for N calls: callgrind's cache model (this machine's L1i).
count() {
  OPENBLAS_NUM_THREADS=1 PYTHONHASHSEED=0 DLARRAY_BACKENDS=cpu \
    valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=/dev/null \
    .venv/bin/python "$probe" "$1" "$2" 2>&1 >/dev/null |
    sed -n 's/.*Collected : *\([0-9]*\) [0-9]* [0-9]* \([0-9]*\).*/\1 \2/p'
}
for what in ${1:-loop own import export}; do
  read -r ia ma <<<"$(count "$what" "$n")"
  read -r ib mb <<<"$(count "$what" $((2 * n)))"
  echo "$what: $(((ib - ia) / n)) instructions, $(((mb - ma) / n)) L1i misses per call"
done
