#!/usr/bin/env bash
# Fuzzes DLPack import for [minutes] (default 10) with cargo-fuzz (libFuzzer + ASan). Stable
# rustc runs cargo-fuzz's nightly flags with RUSTC_BOOTSTRAP=1. New inputs that reach new
# code are added to fuzz/corpus/dlpack_import (commit them: `tests/fuzz_replay.rs` replays
# the corpus in every test run); a crash is saved under fuzz/artifacts.
#
#   ./scripts/fuzz.sh [minutes]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
# -merge the new corpus entries into the committed one, keeping it small.
mkdir -p fuzz/corpus/dlpack_import fuzz/new-corpus
cargo fuzz run dlpack_import fuzz/new-corpus fuzz/corpus/dlpack_import -- \
  -max_total_time=$((minutes * 60)) -max_len=256 -print_final_stats=1
cargo fuzz run dlpack_import -- -merge=1 fuzz/corpus/dlpack_import fuzz/new-corpus
rm -rf fuzz/new-corpus
echo "corpus: $(ls fuzz/corpus/dlpack_import | wc -l) inputs"
