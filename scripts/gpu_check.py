"""DLPack between dlarray's CUDA backend and real CUDA producers and consumers (PyTorch, JAX):
run by scripts/gpu-check.sh on the lent GPU machine. Every exchange of device memory must be
zero-copy (pointer equality, a write on one side seen on the other), ordered on the streams
(a producer's unfinished work is waited for), and leave no GPU memory behind. Prints one
PASS/FAIL line per check (INFO for behaviour owned by the other framework) and exits 1 on any
FAIL."""
import gc
import sys

import numpy as np

import dlarray

failed = []


def report(ok, name, detail):
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
    if not ok:
        failed.append(name)


def check(name, f):
    try:
        ok, detail = f()
    except Exception as e:  # a check that raises failed
        ok, detail = False, f"{type(e).__name__}: {e}"
    report(ok, name, detail)


def info(name, f):
    """Prints what happens, without judging: behaviour owned by the other framework."""
    try:
        print(f"INFO {name}: {f()!r}", flush=True)
    except Exception as e:
        print(f"INFO {name}: {type(e).__name__}: {e}", flush=True)


def host(a):
    """The values of a dlarray array as NumPy (float32 for dtypes NumPy lacks)."""
    if a.dtype in ("bfloat16",):
        a = a.astype("float32")
    return np.asarray(a.to_device("cpu:0"))


def torch_checks():
    import torch

    print("torch", torch.__version__, torch.cuda.get_device_name(0), flush=True)
    print("dlarray devices:", [str(d) for d in dlarray.devices()], flush=True)

    def import_zero_copy(t):
        a = dlarray.from_dlpack(t)
        torch.cuda.synchronize()
        want = t.float().cpu().numpy()
        got = host(a).astype(np.float32)
        same = a.unsafe_buffer_pointer() == t.data_ptr() + 0
        return (
            np.array_equal(got, want) and a.platform() == "gpu" and same
            and a.__dlpack_device__() == (2, 0),
            f"{a.dtype} {a.shape} on {a.device}, same pointer: {same}",
        )

    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    check("dlarray.from_dlpack(torch cuda f32)", lambda: import_zero_copy(t))
    for dt in (torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int8, torch.bool):
        x = (torch.arange(10, device="cuda") % 3).to(dt)
        check(f"dlarray.from_dlpack(torch cuda {dt})", lambda x=x: import_zero_copy(x))

    def transposed():
        x = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
        a = dlarray.from_dlpack(x.t())
        y = a + 1
        return np.array_equal(host(y), (x.t() + 1).cpu().numpy()), f"strides of x.t(): {x.t().stride()}"

    check("a transposed torch view computed on by dlarray", transposed)

    def write_seen():
        x = torch.zeros(1024, device="cuda")
        a = dlarray.from_dlpack(x)
        x.add_(7)
        torch.cuda.synchronize()
        return float(host(a).sum()) == 7 * 1024, "torch's in-place add seen through dlarray"

    check("zero-copy import: a write in torch is seen in dlarray", write_seen)

    def producer_stream_waited():
        # torch's work on a side stream, still running when dlarray imports: the import
        # passes dlarray's stream, torch makes it wait (or the table's work stream is waited).
        n = 1 << 26
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            big = torch.ones(n, device="cuda")
            for _ in range(20):
                big.mul_(1.0).add_(0.0)
            big.mul_(3.0)
            a = dlarray.from_dlpack(big)
            total = float(np.asarray(a.sum().astype("float64").to_device("cpu:0")))
        return total == 3.0 * n, f"sum {total} (want {3.0 * n})"

    check("import waits for the producer's stream", producer_stream_waited)

    def export_zero_copy():
        g = dlarray.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), device="cuda:0")
        tt = torch.from_dlpack(g)
        same = tt.data_ptr() == g.unsafe_buffer_pointer()
        ok = tt.device.type == "cuda" and tt.cpu().tolist() == [[0, 1, 2], [3, 4, 5]] and same
        return ok, f"{tt.device} same pointer: {same}, __dlpack_device__ {g.__dlpack_device__()}"

    check("torch.from_dlpack(dlarray cuda)", export_zero_copy)

    def export_ordered():
        # dlarray's work still queued when torch imports: torch's stream must wait for it.
        n = 1 << 26
        g = dlarray.ones((n,), dtype="float32", device="cuda:0")
        for _ in range(20):
            g = g * 1.0 + 0.0
        g = g * 3.0
        tt = torch.from_dlpack(g)
        total = float(tt.double().sum())
        return total == 3.0 * n, f"sum {total} (want {3.0 * n})"

    check("export: torch's stream waits for dlarray's work", export_ordered)

    def through_both():
        x = torch.randn(256, 256, device="cuda")
        a = dlarray.from_dlpack(x)
        y = torch.from_dlpack(a @ a + a)
        want = x @ x + x
        err = float((y - want).abs().max())
        return err < 1e-3, f"max error {err:.2e}"

    check("torch -> dlarray (matmul, add) -> torch", through_both)

    def matmul_like_torch(dt, batch, transposed):
        # cuBLAS's path for these (batched, transposed views); f32 without TF32.
        torch.backends.cuda.matmul.allow_tf32 = False
        x = torch.randn(batch, 192, 128, device="cuda").to(dt)
        y = torch.randn(batch, 128, 160, device="cuda").to(dt)
        if transposed:
            x = x.transpose(1, 2).contiguous().transpose(1, 2)
        got = torch.from_dlpack(dlarray.from_dlpack(x) @ dlarray.from_dlpack(y)).float()
        want = (x @ y).float()
        err = float((got - want).abs().max() / want.abs().max())
        return err < (2e-2 if dt != torch.float32 else 1e-5), f"relative error {err:.2e}"

    for dt in (torch.float32, torch.bfloat16, torch.float16):
        for batch, tr in ((1, False), (3, True)):
            check(f"matmul {dt} batch {batch} transposed {tr} vs torch",
                  lambda dt=dt, batch=batch, tr=tr: matmul_like_torch(dt, batch, tr))

    def no_leak():
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        for _ in range(500):
            x = torch.ones(1 << 16, device="cuda")
            a = dlarray.from_dlpack(x)
            b = a + 1
            del x, a, b
        gc.collect()
        torch.cuda.synchronize()
        # dlarray frees imported memory after its last queued use: give the deleters a turn.
        dlarray.ones((1,), device="cuda:0").block_until_ready()
        gc.collect()
        after = torch.cuda.memory_allocated()
        return after == before, f"torch memory {before} -> {after} bytes after 500 imports"

    check("imports hand torch's memory back", no_leak)

    def pinned():
        g = dlarray.asarray(np.arange(4, dtype=np.float32), device="cuda:0")
        p = g.to_device("cuda:0", memory_kind="pinned_host")
        ok = p.memory_kind == "pinned_host" and p.__dlpack_device__() == (3, 0)
        return ok and host(p).tolist() == [0, 1, 2, 3], f"{p.memory_kind} {p.__dlpack_device__()}"

    check("pinned_host memory exports kDLCUDAHost", pinned)
    info("torch.from_dlpack(dlarray pinned_host)", lambda: torch.from_dlpack(
        dlarray.asarray(np.ones(3, np.float32), device="cuda:0").to_device(
            "cuda:0", memory_kind="pinned_host")).device)


def jax_checks():
    import jax
    import jax.numpy as jnp

    gpu = jax.devices("gpu")[0]
    print("jax", jax.__version__, gpu, flush=True)
    j = jax.device_put(jnp.arange(10, dtype=jnp.float32), gpu)

    def jax_in():
        a = dlarray.from_dlpack(j)
        same = a.unsafe_buffer_pointer() == j.unsafe_buffer_pointer()
        ok = np.array_equal(host(a), np.arange(10, dtype=np.float32)) and same
        return ok, f"{a.device}, same pointer: {same}"

    check("dlarray.from_dlpack(jax gpu)", jax_in)

    def jax_out():
        g = dlarray.asarray(np.arange(8, dtype=np.float32), device="cuda:0")
        x = jnp.from_dlpack(g)
        same = x.unsafe_buffer_pointer() == g.unsafe_buffer_pointer()
        ok = list(x.devices())[0].platform == "gpu" and x.tolist() == list(range(8))
        return ok, f"{x.devices()}, same pointer: {same}"

    check("jnp.from_dlpack(dlarray cuda)", jax_out)


for part in (torch_checks, jax_checks):
    try:
        part()
    except Exception as e:
        report(False, part.__name__, f"{type(e).__name__}: {e}")
print(f"{len(failed)} failed: {failed}", flush=True)
sys.exit(1 if failed else 0)
