#!/usr/bin/env bash
# Regenerates docs/benchmarks.md and docs/bench.svg on this machine: `dlarray bench` over every
# backend, the criterion CPU suite beside ndarray and candle, and NumPy/PyTorch on the same
# work, in one sitting (~30 minutes on 2 cores). Raw outputs stay in target/benchmarks/.
#
#   ./scripts/benchmarks.sh            # everything
#   BENCH_ARGS="--quick" ./scripts/benchmarks.sh   # a short `dlarray bench` matrix
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/venv.sh >/dev/null
out=target/benchmarks
mkdir -p "$out" docs
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/dlarray-xdg-$(id -u)"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fi
cargo build --release -q --bin dlarray
echo "== dlarray bench ${BENCH_ARGS:-}" >&2
# shellcheck disable=SC2086
target/release/dlarray bench ${BENCH_ARGS:---sizes 1K,64K,1M} \
  --json "$out/bench.json" --plot docs/bench.svg >"$out/bench.txt"
echo "== criterion: cargo bench --bench cpu_peers" >&2
rm -rf target/criterion/add_f32 target/criterion/sum_f32 target/criterion/exp_f32 target/criterion/exp_f64 target/criterion/matmul_f32_1024 \
  target/criterion/add_f32_8_overhead target/criterion/dlpack_round_trip_1KiB
cargo bench -q --bench cpu_peers >"$out/criterion.txt" 2>&1
echo "== dlarray, ndarray and candle in turns: cargo bench --bench peers_in_turns, three processes" >&2
for i in 1 2 3; do
  cargo bench -q --bench peers_in_turns -- --json "$out/turns$i.json" 2>/dev/null
done
echo "== the curve between the tables' sizes: peers_in_turns --sizes (27 sizes), three processes" >&2
# Powers of two and the midpoints between them, 1K to 64M: where splitting, the pool and the
# fixed cost start and stop paying, and whether any size between the tables' falls behind.
curve=1K,1536,2K,3K,4K,6K,8K,12K,16K,24K,32K,48K,64K,96K,128K,192K,256K,384K,512K,768K,1M,2M,4M,8M,16M,32M,64M
for i in 1 2 3; do
  cargo bench -q --bench peers_in_turns -- --sizes "$curve" --rounds 11 --json "$out/curve$i.json" 2>/dev/null
done
# The release module first: numeric_peers.py also times dlarray beside NumPy and torch.
(cd python && VIRTUAL_ENV="$PWD/../.venv" PATH="$PWD/../.venv/bin:$PATH" maturin develop -q --profile wheel)
echo "== NumPy and PyTorch: python/bench/numeric_peers.py" >&2
# OpenBLAS's SkylakeX kernel, not the Haswell one OPENBLAS_CORETYPE may force. Its workers
# spin 2^28 cycles (~0.1 s) after a matmul by default, through the 20 ms pause meant to let
# them sleep: on the Intel guest dlarray's next matmul took 19-25 ms instead of 7-9, the
# spinning worker holding one of the 2 cores. 2^20 cycles (under 1 ms) lets the pause work.
env -u OPENBLAS_CORETYPE OPENBLAS_THREAD_TIMEOUT=20 .venv/bin/python python/bench/numeric_peers.py --runs 3 --json "$out/py_peers.json" \
  >"$out/py_peers.txt"
echo "== Python DLPack against NumPy: python/bench/dlpack_bench.py --numpy-ratios" >&2
# Three processes: some runs of the same build land in a slower mode (~+40 ns per call).
for _ in 1 2 3; do .venv/bin/python python/bench/dlpack_bench.py --numpy-ratios; done >"$out/py_dlpack.txt"
echo "== the first large ops after idle: examples/idle_matmul.rs, default and unpinned" >&2
cargo build --release -q --example idle_matmul
DLARRAY_BACKENDS=cpu target/release/examples/idle_matmul >"$out/idle_default.txt"
DLARRAY_BACKENDS=cpu DLARRAY_PIN_THREADS=0 target/release/examples/idle_matmul >"$out/idle_unpinned.txt"
.venv/bin/python scripts/benchmarks_report.py "$out" >docs/benchmarks.md
echo "wrote docs/benchmarks.md and docs/bench.svg" >&2
