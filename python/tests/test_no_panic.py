"""Bad input loses nothing: every public function and method, called with random arguments
drawn from a pool of odd values (huge and negative sizes, NaN, wrong types, views, empty and
0-d arrays, other dtypes), raises an ordinary exception or returns. A Rust panic
(pyo3's PanicException), a SystemError, an abort or a hang fails the test. The draws are
seeded, so a failure names a call that reproduces.

Sizes stay either small or far beyond memory (2**40 and up): a request that merely fits
would be a legitimate multi-GiB allocation."""
import random

import numpy as np
import pytest

import dlarray as d

SKIP = {"set_dlpack_policy", "random", "Device", "UnsupportedError", "dtype", "dlarray"}


def arrays():
    out = [d.asarray((np.arange(6).reshape(2, 3) % 3)).astype(getattr(d, dt))
           for dt in ("bool", "int8", "uint8", "int64", "uint64", "float16", "bfloat16", "float32",
                      "complex128")]
    out.append(d.asarray(np.zeros((0, 3), np.float32)))
    out.append(d.asarray(np.float64(2.5)))
    out.append(d.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))[:, ::-1, 1::2])
    out.append(d.asarray(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)))
    out.append(d.asarray(np.array([2**63 - 1, -2**63], np.int64)))
    return out


ODD = [0, 1, -1, 2, -7, 2**40, 2**63, -2**63 - 1, 2**64, 2**200, 1.5, -0.0, float("nan"),
       float("inf"), True, 1j, None, "x", (), (1,), (0, 1), (-1,), (1, -1), (2, 3), [1, 2],
       (2**40, 2**40), (2**62, 4), slice(None), Ellipsis, d.float32, d.int8, d.bool, "cpu",
       np.float32(2), np.int64(-1), np.array([1, 2]), [], [[1, 2], [3]], object()]
KEYWORDS = [{}, {"axis": 0}, {"axis": -1}, {"axis": 5}, {"axis": (0, 0)}, {"keepdims": True},
            {"dtype": d.int8}, {"copy": False}, {"device": "tpu:7"}, {"correction": -1},
            {"k": 10**20}, {"descending": True}, {"n": -1}, {"side": "x"}, {"num": 2**40},
            {"shape": (-2,)}, {"fill_value": 2**70}, {"indexing": "zz"}, {"stream": -5},
            {"max_version": (2**40, 0)}, {"dl_device": (1, -1)}, {"memory_kind": "bogus"}]


def callables():
    fs = [(n, getattr(d, n)) for n in dir(d)
          if not n.startswith("_") and n not in SKIP and callable(getattr(d, n))
          and not isinstance(getattr(d, n), d.dtype)]
    methods = [n for n in dir(d.Array) if not n.startswith("__") or n in (
        "__getitem__", "__add__", "__pow__", "__rpow__", "__truediv__", "__floordiv__",
        "__mod__", "__lshift__", "__matmul__", "__eq__", "__lt__", "__and__", "__dlpack__",
        "__int__", "__float__", "__bool__", "__index__", "__complex__", "__abs__", "__neg__")]
    return fs, methods


def test_no_call_panics():
    rng = random.Random(20261205)
    pool_arrays = arrays()
    pool = pool_arrays + ODD
    failures = []

    def call(name, f, args, kw):
        try:
            r = f(*args, **kw)
            if isinstance(r, d.Array) and r.size < 1000:
                r.tolist()
        except BaseException as e:  # noqa: BLE001: the point is to see every kind
            if type(e).__name__ == "PanicException" or isinstance(e, SystemError) \
                    or not isinstance(e, Exception):
                failures.append(f"{name}(*{args!r}, **{kw!r}) -> {type(e).__name__}: {e}")

    fs, methods = callables()
    for name, f in fs:
        # Every odd value in each of the first three places, the others drawn.
        for v in pool:
            a, b = rng.choice(pool_arrays), rng.choice(pool)
            for args in ([v], [a, v], [a, b, v]):
                call(name, f, args, rng.choice(KEYWORDS))
        for _ in range(100):
            args = [rng.choice(pool) for _ in range(rng.randint(0, 3))]
            call(name, f, args, rng.choice(KEYWORDS))
    for name in methods:
        for a in pool_arrays:
            try:
                m = getattr(a, name)
            except Exception:  # a property that refuses this array (mT of a 0-d one)
                continue
            if not callable(m):
                continue
            for v in pool:
                call(f"Array.{name}", m, [v], rng.choice(KEYWORDS))
                call(f"Array.{name}", m, [rng.choice(pool), v], rng.choice(KEYWORDS))
    assert not failures, "\n".join(failures[:20])
