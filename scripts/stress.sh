#!/usr/bin/env bash
# The stress test for longer than the suite's 2 s: 8 threads exporting, importing, cloning,
# computing on, moving and dropping shared arrays, in a release build.
#
#   ./scripts/stress.sh [seconds]     # default 10
set -euo pipefail
cd "$(dirname "$0")/.."
DLARRAY_STRESS_SECS="${1:-10}" DLARRAY_BACKENDS=cpu,tpu \
  cargo test -q --release --all-features --test stress -- --nocapture
