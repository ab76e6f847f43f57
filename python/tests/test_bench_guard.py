"""The benchmark scripts refuse to time a debug build of the module (the tests' build)."""
import pathlib
import subprocess
import sys

import pytest

import dlarray

BENCH = pathlib.Path(__file__).resolve().parents[1] / "bench"


def test_the_module_says_how_it_was_built():
    assert isinstance(dlarray._debug_build, bool)


@pytest.mark.parametrize("script", ["dlpack_bench.py", "numeric_peers.py"])
def test_benchmarks_refuse_a_debug_build(script):
    if not dlarray._debug_build:
        pytest.skip("an optimised module: the benchmark would run in full")
    r = subprocess.run([sys.executable, str(BENCH / script), "--numpy-ratios"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "debug build" in r.stderr
    assert "maturin develop --profile wheel" in r.stderr
