#!/usr/bin/env bash
# The whole test suite. Installs what the tests need on Debian/Ubuntu (when run as root, or
# with sudo available), then runs every Rust test with the required backends enforced.
#
#   ./scripts/test.sh            # everything
#   ./scripts/test.sh --test ops # extra arguments go to `cargo test`
set -euo pipefail
cd "$(dirname "$0")/.."

# --- system packages the tests use -------------------------------------------------------
# None beyond a Rust toolchain and a C compiler yet; backends that need drivers add theirs
# here (and their name to DLARRAY_REQUIRE below).
need_pkgs=()
command -v cc >/dev/null || need_pkgs+=(build-essential)
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
# Every backend listed here must be available, or the tests fail (no silent skips).
export DLARRAY_REQUIRE="${DLARRAY_REQUIRE:-cpu,tpu}"
echo "DLARRAY_REQUIRE=$DLARRAY_REQUIRE"
cargo test --all-features "$@"
