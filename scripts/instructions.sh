#!/usr/bin/env bash
# Instructions per iteration of a probe example, counted by valgrind's callgrind: exact and
# repeatable on a shared, noisy machine where wall-clock times of ~100 ns are not.
#
#   ./scripts/instructions.sh tiny_add      # one 8-element add through the whole runtime
#   ./scripts/instructions.sh tiny_sum      # one sum of 1K f32 to a 0-d array
#   ./scripts/instructions.sh dlpack_loop   # one DLPack export + import round trip
#
# Runs the example with N and 2N iterations and prints (count(2N) - count(N)) / N, which
# cancels start-up and set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
example=${1:?usage: $0 EXAMPLE [N]}
n=${2:-50000}
cargo build -q --release --example "$example"
count() {
  DLARRAY_BACKENDS=cpu valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "target/release/examples/$example" "$1" 2>&1 >/dev/null |
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
a=$(count "$n")
b=$(count $((2 * n)))
echo "$example: $(((b - a) / n)) instructions per iteration"
