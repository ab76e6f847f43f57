"""NumPy and PyTorch on the CPU work of `cargo bench --bench foundation` (16M-element f32 add
and sum, 1024x1024 f32 matmul), to compare with dlarray in the same minutes:

    .venv/bin/python python/bench/numeric_peers.py && cargo bench --bench foundation

Medians of 31 timed calls after 3 warm-ups; torch limited to this machine's cores."""
import os
import time

import numpy as np
import torch

torch.set_num_threads(os.cpu_count() or 1)


def median_ms(f, n=31, warm=3):
    for _ in range(warm):
        f()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[n // 2] * 1e3


N = 16 << 20
a = (np.arange(N) % 13).astype(np.float32)
b = a.copy()
ta, tb = torch.from_numpy(a), torch.from_numpy(b)
m = np.random.default_rng(0).random((1024, 1024), dtype=np.float32)
tm = torch.from_numpy(m)
gflops = lambda ms: 2 * 1024**3 / (ms * 1e-3) / 1e9
print(f"add f32 16M    numpy {median_ms(lambda: a + b):7.2f} ms   torch {median_ms(lambda: ta + tb):7.2f} ms")
print(f"sum f32 16M    numpy {median_ms(lambda: a.sum()):7.2f} ms   torch {median_ms(lambda: ta.sum()):7.2f} ms")
print(f"matmul f32 1024 numpy {gflops(median_ms(lambda: m @ m)):6.0f} GFLOP/s torch {gflops(median_ms(lambda: tm @ tm)):6.0f} GFLOP/s")
