"""NumPy and PyTorch on the CPU work of `cargo bench --bench cpu_peers` (add and sum of f32 at
1K to 64M elements, exp of f32 and f64 to 16M, 1024x1024 f32 matmul, an 8-element add), to set beside dlarray, ndarray
and candle in the same minutes:

    .venv/bin/python python/bench/numeric_peers.py [--json FILE]

Median of timed batches after warm-up (batches of at least 2 ms, as criterion sizes them);
torch limited to this machine's cores. Prints a table; `--json` writes
{"group/peer/size": seconds} with the groups and size labels criterion uses.

Then, where the dlarray module is installed, the memory-bound sizes once more with dlarray
beside NumPy and torch on the same memory (dlarray imports the NumPy array through DLPack)
and in the same seconds: the three take turns, one batch each per round, so a machine whose
memory bandwidth drifts from minute to minute (a shared VM) moves all three alike. Before
each batch the script sleeps 20 ms, so the previous library's workers (torch's OpenMP threads
spin after each op) are asleep and do not compete for the cores, then runs one untimed batch
(waking a pool after idle takes torch milliseconds on a VM). OpenBLAS's workers spin ~0.1 s
by default, through that pause: `scripts/benchmarks.sh` runs this with
`OPENBLAS_THREAD_TIMEOUT=20` (2^20 cycles) so that they too sleep by the next batch.
The 1024x1024 float32 matmul too (`matmul_f32_1024`, size `1024`). `--runs N` repeats these
rounds N times (default 1): `same_memory/...` holds the median of the runs' medians and
`same_memory_runs/...` each run's, in order.
Keys `same_memory/group/peer/size`."""
import json
import os
import sys
import time

import numpy as np
import torch

torch.set_num_threads(os.cpu_count() or 1)

SIZES = [("1K", 1 << 10), ("2K", 1 << 11), ("4K", 1 << 12), ("8K", 1 << 13), ("16K", 1 << 14),
         ("64K", 1 << 16), ("256K", 1 << 18), ("1M", 1 << 20),
         ("4M", 1 << 22), ("16M", 1 << 24), ("64M", 1 << 26)]

EXP_SIZES = ["1K", "16K", "256K", "1M", "16M"]


def exp_args(n):
    """The exp groups' arguments, as benches/cpu_peers.rs makes them: spread over [-10, 10)."""
    x = (np.arange(n) % 2000) * 0.01 - 10.0
    return {"exp_f32": x.astype(np.float32), "exp_f64": x}


def median_s(f, samples=15):
    for _ in range(3):
        f()
    t = time.perf_counter()
    f()
    once = max(time.perf_counter() - t, 1e-9)
    reps = max(1, min(100_000, int(2e-3 / once) + 1))
    ts = []
    for _ in range(samples):
        t = time.perf_counter()
        for _ in range(reps):
            f()
        ts.append((time.perf_counter() - t) / reps)
    ts.sort()
    return ts[len(ts) // 2]


def interleaved_medians(fs, rounds=15):
    """Median seconds per call of each of `fs` (name -> callable), the callables taking turns."""
    for f in fs.values():
        f()
    t = time.perf_counter()
    next(iter(fs.values()))()
    reps = max(1, int(2e-3 / max(time.perf_counter() - t, 1e-9)) + 1)
    ts = {k: [] for k in fs}
    for _ in range(rounds):
        for k, f in fs.items():
            time.sleep(0.02)
            for _ in range(reps):
                f()
            t = time.perf_counter()
            for _ in range(reps):
                f()
            ts[k].append((time.perf_counter() - t) / reps)
    return {k: sorted(v)[len(v) // 2] for k, v in ts.items()}


SAME_MEMORY_SIZES = [("1M", 1 << 20), ("4M", 1 << 22), ("16M", 1 << 24), ("64M", 1 << 26)]


def same_memory(out):
    """One run of the same-memory rounds: {"group/peer/size": median seconds}."""
    import dlarray

    for label, n in SAME_MEMORY_SIZES:
        a = ((np.arange(n) % 1000) * 0.5).astype(np.float32)
        b = a.copy()
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        da, db = dlarray.from_dlpack(a), dlarray.from_dlpack(b)
        work = {
            "add_f32": {"numpy": lambda: a + b, "torch": lambda: ta + tb,
                        "dlarray": lambda: da + db},
            "sum_f32": {"numpy": lambda: a.sum(), "torch": lambda: ta.sum(),
                        "dlarray": lambda: da.sum()},
        }
        if label in EXP_SIZES:
            for group, x in exp_args(n).items():
                tx, dx = torch.from_numpy(x), dlarray.from_dlpack(x)
                work[group] = {"numpy": lambda x=x: np.exp(x), "torch": lambda tx=tx: torch.exp(tx),
                               "dlarray": lambda dx=dx: dlarray.exp(dx)}
        for group, fs in work.items():
            for peer, s in interleaved_medians(fs).items():
                out[f"{group}/{peer}/{label}"] = s
    m = ((np.arange(1024 * 1024) % 17) * 0.1).astype(np.float32).reshape(1024, 1024)
    tm, dm = torch.from_numpy(m), dlarray.from_dlpack(m)
    fs = {"numpy": lambda: m @ m, "torch": lambda: tm @ tm, "dlarray": lambda: dm @ dm}
    for peer, s in interleaved_medians(fs).items():
        out[f"matmul_f32_1024/{peer}/1024"] = s


def same_memory_runs(out, runs):
    try:
        import dlarray  # noqa: F401
    except ImportError:
        print("dlarray module not installed: no same-memory rounds", file=sys.stderr)
        return
    each = []
    for i in range(runs):
        one = {}
        same_memory(one)
        each.append(one)
        print(f"same-memory run {i + 1} of {runs}: done", file=sys.stderr)
    for key in each[0]:
        values = [run[key] for run in each]
        out[f"same_memory/{key}"] = sorted(values)[len(values) // 2]
        out[f"same_memory_runs/{key}"] = values


def main():
    try:
        import dlarray
    except ImportError:
        pass
    else:
        from optimised import require_optimised

        require_optimised(dlarray)
    out = {}
    for label, n in SIZES:
        a = ((np.arange(n) % 1000) * 0.5).astype(np.float32)
        b = a.copy()
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        out[f"add_f32/numpy/{label}"] = median_s(lambda: a + b)
        out[f"add_f32/torch/{label}"] = median_s(lambda: ta + tb)
        out[f"sum_f32/numpy/{label}"] = median_s(lambda: a.sum())
        out[f"sum_f32/torch/{label}"] = median_s(lambda: ta.sum())
        if label in EXP_SIZES:
            for group, x in exp_args(n).items():
                tx = torch.from_numpy(x)
                out[f"{group}/numpy/{label}"] = median_s(lambda: np.exp(x))
                out[f"{group}/torch/{label}"] = median_s(lambda: torch.exp(tx))
    m = ((np.arange(1024 * 1024) % 17) * 0.1).astype(np.float32).reshape(1024, 1024)
    tm = torch.from_numpy(m)
    out["matmul_f32_1024/numpy"] = median_s(lambda: m @ m)
    out["matmul_f32_1024/torch"] = median_s(lambda: tm @ tm)
    e = np.arange(8, dtype=np.float32)
    te = torch.from_numpy(e)
    out["add_f32_8_overhead/numpy"] = median_s(lambda: e + e)
    out["add_f32_8_overhead/torch"] = median_s(lambda: te + te)
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 1
    same_memory_runs(out, runs)
    for k, v in out.items():
        if not k.startswith("same_memory_runs/"):
            print(f"{k:32} {v * 1e6:12.3f} us")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
