"""Time of one DLPack exchange, side by side in one run:

    np.from_dlpack(x)     for x a dlarray Array, a torch tensor, a NumPy array
    torch.from_dlpack(x)  for x a dlarray Array, a torch tensor, a NumPy array

Run: .venv/bin/python python/bench/dlpack_bench.py
     .venv/bin/python python/bench/dlpack_bench.py --numpy-ratios   # the issue's two targets
(with the optimised module: `cd python && maturin develop --profile wheel`).
"""
import timeit

import numpy as np
import torch

import dlarray
from optimised import require_optimised


def best(stmt, number):
    return min(timeit.repeat(stmt, number=number, repeat=7)) / number


def main():
    for n in (1, 1 << 20):
        d = dlarray.asarray(np.zeros(n, np.float32))
        t = torch.zeros(n, dtype=torch.float32)
        a = np.zeros(n, np.float32)
        print(f"== {n} float32 elements (ns per exchange; ratio to the torch tensor)")
        for consumer, f in (("np.from_dlpack", np.from_dlpack), ("torch.from_dlpack", torch.from_dlpack)):
            times = {name: best(lambda x=x: f(x), 20000) * 1e9
                     for name, x in (("dlarray", d), ("torch", t), ("numpy", a))}
            line = "  ".join(f"{k} {v:7.0f}" for k, v in times.items())
            print(f"  {consumer:<18} {line}   dlarray/torch = {times['dlarray'] / times['torch']:.2f}x")


def exchange_api_gain():
    """dlarray.from_dlpack of a torch tensor: through PyTorch's C exchange API (default)
    vs the Python-level __dlpack__ call (forced by passing copy=False, which the table
    cannot express)."""
    t = torch.zeros(1 << 10, dtype=torch.float32)
    fast = best(lambda: dlarray.from_dlpack(t), 20000) * 1e9
    slow = best(lambda: dlarray.from_dlpack(t, copy=False), 20000) * 1e9
    print(f"== dlarray.from_dlpack(torch tensor): exchange API {fast:.0f} ns, "
          f"__dlpack__ {slow:.0f} ns: {slow / fast:.2f}x faster")
    d = dlarray.asarray(np.zeros(1 << 10, np.float32))
    with_api = best(lambda: torch.from_dlpack(d), 20000) * 1e9
    table = dlarray.Array.__dlpack_c_exchange_api__
    del dlarray.Array.__dlpack_c_exchange_api__
    without = best(lambda: torch.from_dlpack(d), 20000) * 1e9
    dlarray.Array.__dlpack_c_exchange_api__ = table
    print(f"== torch.from_dlpack(dlarray Array): with our exchange API {with_api:.0f} ns, "
          f"without {without:.0f} ns: {without / with_api:.2f}x")


def numpy_ratios():
    """The two Python DLPack targets of the benchmarks issue, on 256 float32: importing a NumPy
    array into dlarray beside NumPy's own import of it, and NumPy importing a dlarray Array
    beside NumPy importing a NumPy array. A loop of calls, as user code makes them: 9 rounds,
    each one batch of 100k calls of the three in turn, and the median batch of each. Turns
    interleaved: on a shared machine the speed drifts by several percent within seconds, and
    three runs one after the other put that drift into the ratios."""
    import statistics
    import time

    x = np.arange(256, dtype=np.float32)
    d = dlarray.asarray(x)
    calls = {
        "own": lambda: np.from_dlpack(x),
        "import": lambda: dlarray.from_dlpack(x),
        "export": lambda: np.from_dlpack(d),
    }

    def batch(f, n=100_000):
        t = time.perf_counter()
        for _ in range(n):
            f()
        return (time.perf_counter() - t) / n * 1e9

    for f in calls.values():
        batch(f, 20_000)
    times = {k: [] for k in calls}
    for _ in range(9):
        for k, f in calls.items():
            times[k].append(batch(f))
    own, imp, exp = (statistics.median(times[k]) for k in ("own", "import", "export"))
    print(f"np.from_dlpack(numpy array)      {own:5.0f} ns")
    print(f"dlarray.from_dlpack(numpy array) {imp:5.0f} ns  {imp / own:.2f}x NumPy's (target <= 2x)")
    print(f"np.from_dlpack(dlarray Array)    {exp:5.0f} ns  {exp / own:.2f}x NumPy's (target <= 1.2x)")


if __name__ == "__main__":
    import sys

    require_optimised(dlarray)
    if "--numpy-ratios" in sys.argv:
        numpy_ratios()
    else:
        main()
        exchange_api_gain()
