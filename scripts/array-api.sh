#!/usr/bin/env bash
# Runs the Python array API's own test suite (vendored in ../shared/array-api-tests) against
# the dlarray module in the test venv, and compares the failing tests with the committed
# list python/array-api-failing.txt: a test failing that is not listed fails the run (the
# list may only shrink); a listed test that now passes is reported, to be removed from it.
#
#   ./scripts/array-api.sh            # compare
#   ./scripts/array-api.sh --update   # rewrite the list from this run
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${ARRAY_API_TESTS:-../shared/array-api-tests}
py=.venv/bin/python
"$py" -m pip install -q hypothesis ndindex pytest-json-report
(cd python && VIRTUAL_ENV="$PWD/../.venv" PATH="$PWD/../.venv/bin:$PATH" maturin develop -q)
out=$(mktemp)
# A fixed seed and example count, so two runs of the same code fail the same tests.
ARRAY_API_TESTS_MODULE=dlarray "$py" -m pytest "$suite/array_api_tests" -q -rf \
  -p no:cacheprovider --max-examples 10 --hypothesis-seed=0 >"$out" 2>&1 || true
tail -1 "$out"
grep -o '^FAILED [^ ]*' "$out" | cut -d' ' -f2 | sed 's#.*array_api_tests/##' | sort -u >"$out.failed"
list=python/array-api-failing.txt
if [ "${1:-}" = --update ]; then
  cp "$out.failed" "$list"
  echo "wrote $(wc -l <"$list") failing tests to $list"
  exit 0
fi
new=$(comm -13 "$list" "$out.failed")
fixed=$(comm -23 "$list" "$out.failed")
[ -z "$fixed" ] || { echo "now passing (remove from $list):"; echo "$fixed"; }
if [ -n "$new" ]; then
  echo "newly failing (not in $list):"; echo "$new"
  exit 1
fi
echo "array API suite: no new failures ($(wc -l <"$list") listed)"
