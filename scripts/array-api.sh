#!/usr/bin/env bash
# Runs the Python array API's own test suite (vendored in ../shared/array-api-tests) against
# the dlarray module in the test venv, and compares the failing tests with the committed
# list python/array-api-failing.txt: a test failing that is not listed fails the run (the
# list may only shrink); a listed test that now passes is reported, to be removed from it.
# Each line of the list is a test id, a tab, then `#` and why it fails (the first line of the error
# this run saw: written by --update, ignored by the comparison).
#
#   ./scripts/array-api.sh            # compare
#   ./scripts/array-api.sh --update   # rewrite the list from this run
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${ARRAY_API_TESTS:-../shared/array-api-tests}
py=.venv/bin/python
"$py" -m pip install -q hypothesis ndindex pytest-json-report
(cd python && VIRTUAL_ENV="$PWD/../.venv" PATH="$PWD/../.venv/bin:$PATH" maturin develop -q --profile dev)
out=$(mktemp)
# A fixed seed and example count, so two runs of the same code fail the same tests.
# No deadline: a slow machine must not turn a passing test into a failing one. No example
# database either: every run, here or on a fresh clone, tries the same examples.
rm -rf .hypothesis
ARRAY_API_TESTS_MODULE=dlarray "$py" -m pytest "$suite/array_api_tests" -q -rf \
  -p no:cacheprovider --max-examples 10 --hypothesis-seed=0 --disable-deadline \
  --json-report --json-report-file="$out.json" >"$out" 2>&1 || true
tail -1 "$out"
# `id<TAB># reason` per failing test (ids may hold spaces), sorted by id.
"$py" - "$out.json" >"$out.reasons" <<'EOF'
import json, sys
rows = {}
for t in json.load(open(sys.argv[1]))["tests"]:
    if t["outcome"] != "failed":
        continue
    tid = t["nodeid"].split("array_api_tests/", 1)[-1]
    stage = next((t[k] for k in ("setup", "call") if t.get(k, {}).get("outcome") == "failed"), {})
    msg = (stage.get("crash") or {}).get("message", "") or stage.get("longrepr", "")
    msg = " ".join(msg.split())[:140]
    rows.setdefault(tid, msg)
for tid in sorted(rows):
    print(f"{tid}\t# {rows[tid]}")
EOF
cut -f1 "$out.reasons" | sort -u >"$out.failed"
list=python/array-api-failing.txt
if [ "${1:-}" = --update ]; then
  cp "$out.reasons" "$list"
  echo "wrote $(wc -l <"$list") failing tests to $list"
  exit 0
fi
new=$(cut -f1 "$list" | sort -u | comm -13 - "$out.failed")
fixed=$(cut -f1 "$list" | sort -u | comm -23 - "$out.failed")
[ -z "$fixed" ] || { echo "now passing (remove from $list):"; echo "$fixed"; }
if [ -n "$new" ]; then
  echo "newly failing (not in $list):"; echo "$new"
  exit 1
fi
echo "array API suite: no new failures ($(wc -l <"$list") listed)"
