"""The CUDA targets of issue 11, measured in one process on the lent GPU (scripts/gpu-check.sh):
dlarray's cuda:0 beside PyTorch on the same GPU in the same seconds. Each figure is the median
of 7 samples; a sample runs the op `reps` times between two full synchronisations (torch's and
dlarray's `block_until_ready`), so launch overhead counts as a user sees it. Prints one line
per figure and one per target ratio (> 1 is dlarray faster), and writes them as JSON to the
file named by the first argument."""
import json
import statistics
import sys
import time

import numpy as np
import torch

import dlarray

torch.backends.cuda.matmul.allow_tf32 = False  # the targets compare true f32 products
torch.backends.cudnn.allow_tf32 = False
results = {}


def timed_together(cases, reps, samples=7):
    """Median seconds per run of each (run, sync) case: a sample runs it `reps` times between
    two synchronisations, after one untimed run. The cases' samples are taken in turn
    (ABAB..), so clock and power changes over the seconds fall on every case alike."""
    for run, sync in cases:
        run()
        sync()
    times = [[] for _ in cases]
    for _ in range(samples):
        for (run, sync), ts in zip(cases, times):
            sync()
            t = time.perf_counter()
            for _ in range(reps):
                r = run()
            sync(r)
            ts.append((time.perf_counter() - t) / reps)
    return [statistics.median(ts) for ts in times]


def timed(run, sync, reps, samples=7):
    """`timed_together` of one case."""
    return timed_together([(run, sync)], reps, samples)[0]


def tsync(_=None):
    torch.cuda.synchronize()


def dsync(r=None):
    if r is not None and hasattr(r, "block_until_ready"):
        r.block_until_ready()
    torch.cuda.synchronize()  # dlarray's streams belong to the same primary context


def figure(name, seconds, work=None, unit="GB/s"):
    rate = work / seconds / 1e9 if work else None
    results[name] = {"seconds": seconds, "rate": rate, "unit": unit if work else None}
    rate_s = f"  {rate:9.1f} {unit}" if work else ""
    print(f"{name:42s} {seconds * 1e6:12.2f} us{rate_s}", flush=True)


def ratio(name, ours, theirs, target):
    r = theirs / ours
    ok = "meets" if r >= target else "BELOW"
    results[f"ratio {name}"] = {"ratio": r, "target": target}
    print(f"RATIO {name:50s} {r:6.3f}x (target >= {target}: {ok})", flush=True)


def compare(name, ours, theirs):
    """A ratio the issue sets no target for (> 1 is dlarray faster)."""
    r = theirs / ours
    results[f"ratio {name}"] = {"ratio": r, "target": None}
    print(f"RATIO {name:50s} {r:6.3f}x (no target)", flush=True)


def pageable(dev, k, dv, g):
    """Pageable host memory, 256 MiB, a new destination each time on both sides."""
    # Pageable host memory, 256 MiB, a new destination each time on both sides: torch's
    # cudaMemcpy stages in the driver; dlarray in 16 MiB pieces through two pinned blocks
    # (a NumPy array read in place, so h2d also copies it into host staging first).
    hc = torch.rand(k)
    t_ph2d = timed(lambda: hc.to(dev), tsync, 3)
    figure("torch pageable h2d 256 MiB", t_ph2d, 4 * k)
    t_pd2h = timed(lambda: dv.cpu(), tsync, 3)
    figure("torch pageable d2h 256 MiB", t_pd2h, 4 * k)
    hd = dlarray.from_dlpack(hc.numpy())
    d_ph2d = timed(lambda: hd.to_device(dev), dsync, 3)
    figure("dlarray pageable h2d 256 MiB", d_ph2d, 4 * k)
    d_pd2h = timed(lambda: g.to_device("cpu:0"), dsync, 3)
    figure("dlarray pageable d2h 256 MiB", d_pd2h, 4 * k)
    compare("pageable h2d vs torch", d_ph2d, t_ph2d)
    compare("pageable d2h vs torch", d_pd2h, t_pd2h)


def section(name, f, *args):
    """Runs one group of figures: a failure in one must not cost the groups after it."""
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001
        print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def bandwidth(dev):
    n = 256 << 20
    nbytes = 4 * n
    # Bandwidth: the reference is a device-to-device copy of the same bytes (read + written).
    x = torch.rand(n, device=dev)
    y = torch.rand(n, device=dev)
    z = torch.empty_like(x)
    a = dlarray.from_dlpack(x)
    b = dlarray.from_dlpack(y)
    t_copy, t_tadd, t_tsum, t_add, t_sum = timed_together(
        [(lambda: z.copy_(x), tsync), (lambda: torch.add(x, y), tsync), (lambda: x.sum(), tsync),
         (lambda: a + b, dsync), (lambda: a.sum(), dsync)], 5)
    figure("torch d2d copy 1 GiB (read+written)", t_copy, 2 * nbytes)
    figure("torch add f32 256M", t_tadd, 3 * nbytes)
    figure("torch sum f32 256M", t_tsum, nbytes)
    figure("dlarray add f32 256M", t_add, 3 * nbytes)
    figure("dlarray sum f32 256M", t_sum, nbytes)
    copy_bw = 2 * nbytes / t_copy
    ratio("add f32 256M bandwidth / d2d copy bandwidth", 1 / (3 * nbytes / t_add), 1 / copy_bw, 0.85)
    ratio("sum f32 256M bandwidth / d2d copy bandwidth", 1 / (nbytes / t_sum), 1 / copy_bw, 0.8)
    ratio("add f32 256M vs torch", t_add, t_tadd, 1.0)
    ratio("sum f32 256M vs torch", t_sum, t_tsum, 1.0)


def matmul(dev):
    # Matmul 4096: torch's mm is cuBLAS (TF32 off for f32).
    m = 4096
    flop = 2.0 * m**3
    for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        p = torch.randn(m, m, device=dev).to(dt)
        q = torch.randn(m, m, device=dev).to(dt)
        pa, qa = dlarray.from_dlpack(p), dlarray.from_dlpack(q)
        t_t, t_d = timed_together([(lambda: p @ q, tsync), (lambda: pa @ qa, dsync)], 5)
        figure(f"torch (cuBLAS) matmul {name} 4096", t_t, flop, "GFLOP/s")
        figure(f"dlarray matmul {name} 4096", t_d, flop, "GFLOP/s")
        ratio(f"matmul {name} 4096 vs cuBLAS", t_d, t_t, 0.95)
        del p, q, pa, qa


def pinned(dev):
    # Pinned host <-> device, 256 MiB: torch's copy_ is cudaMemcpyAsync of pinned memory.
    k = 64 << 20
    hp = torch.rand(k).pin_memory()
    dv = torch.empty(k, device=dev)
    t_h2d = timed(lambda: dv.copy_(hp, non_blocking=True), tsync, 5)
    figure("torch pinned h2d 256 MiB", t_h2d, 4 * k)
    t_d2h = timed(lambda: hp.copy_(dv, non_blocking=True), tsync, 5)
    figure("torch pinned d2h 256 MiB", t_d2h, 4 * k)
    # dlarray makes a new array each time: beside it, torch allocating pinned memory each
    # time too (its caching host allocator), as context for the raw copy above.
    t_d2h_new = timed(
        lambda: torch.empty(k, pin_memory=True).copy_(dv, non_blocking=True), tsync, 5)
    figure("torch pinned d2h 256 MiB into a new tensor", t_d2h_new, 4 * k)
    g = dlarray.from_dlpack(dv)
    pin = g.to_device(dev, memory_kind="pinned_host")
    d_h2d = timed(lambda: pin.to_device(dev, memory_kind="device"), dsync, 5)
    figure("dlarray pinned h2d 256 MiB", d_h2d, 4 * k)
    d_d2h = timed(lambda: g.to_device(dev, memory_kind="pinned_host"), dsync, 5)
    figure("dlarray pinned d2h 256 MiB", d_d2h, 4 * k)
    ratio("pinned h2d vs torch's cudaMemcpyAsync", d_h2d, t_h2d, 0.9)
    ratio("pinned d2h vs torch's cudaMemcpyAsync", d_d2h, t_d2h, 0.9)
    # Informational (no target): a failure here must not cost the figures after it.
    try:
        pageable(dev, k, dv, g)
    except Exception as e:  # noqa: BLE001
        print(f"pageable transfers: FAILED: {e!r}", flush=True)


def small(dev):
    # An 8-element add, from Python on both sides: launch and dispatch cost.
    s = torch.rand(8, device=dev)
    t_small = timed(lambda: s + s, tsync, 2000)
    figure("torch add f32 8 elements", t_small)
    sa = dlarray.from_dlpack(s)
    d_small = timed(lambda: sa + sa, dsync, 2000)
    figure("dlarray add f32 8 elements", d_small)
    ratio("8-element add vs torch", d_small, t_small, 1.0)

    # DLPack: torch -> torch against torch -> dlarray -> torch (one exchange each way).
    t_rt = timed(lambda: torch.from_dlpack(s), tsync, 2000)
    figure("torch.from_dlpack(torch tensor)", t_rt)
    d_rt = timed(lambda: torch.from_dlpack(dlarray.from_dlpack(s)), tsync, 2000)
    figure("torch.from_dlpack(dlarray.from_dlpack(t))", d_rt)
    ratio("torch -> dlarray -> torch vs torch -> torch (x2)", d_rt, 2 * t_rt, 1.0)


def main():
    dev = "cuda:0"
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}", flush=True)
    for f in (bandwidth, matmul, pinned, small):
        section(f.__name__, f, dev)


if __name__ == "__main__":
    try:
        main()
    finally:
        if len(sys.argv) > 1:
            with open(sys.argv[1], "w") as f:
                json.dump(results, f, indent=1)
