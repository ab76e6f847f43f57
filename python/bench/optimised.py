"""The benchmarks' guard against timing a debug build of the dlarray module."""
import sys


def require_optimised(dlarray):
    """Exits (status 1, the reason on stderr) when `dlarray` was built without optimisation:
    the tests build it so (`--profile dev`, ~10x as long per call), into the same venv, and
    its times would say nothing about the library."""
    if getattr(dlarray, "_debug_build", False):
        sys.exit("the installed dlarray module is a debug build, not worth timing; build the "
                 "optimised one first: cd python && maturin develop --profile wheel")
