"""DLPack between dlarray and real CUDA producers (PyTorch, JAX): run by scripts/gpu-check.sh
on the lent GPU machine. dlarray has no CUDA backend yet, so a GPU tensor must be refused with
a clear error (its deleter run, no GPU memory kept), and copied by the producer when the caller
names a host device. Prints one PASS/FAIL line per check and exits 1 on any FAIL."""
import gc
import sys

import numpy as np

import dlarray

failed = []


def report(ok, name, detail):
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failed.append(name)


def check(name, f):
    try:
        ok, detail = f()
    except Exception as e:  # a check that raises failed
        ok, detail = False, f"{type(e).__name__}: {e}"
    report(ok, name, detail)


def expect_error(name, f, exc, text):
    try:
        r = f()
    except exc as e:
        report(text in str(e), name, f"{type(e).__name__}: {e}")
    except Exception as e:
        report(False, name, f"wrong exception {type(e).__name__}: {e}")
    else:
        report(False, name, f"no error, got {r!r}")


def info(name, f):
    """Prints what happens, without judging: behaviour owned by the other framework."""
    try:
        print(f"INFO {name}: {f()!r}")
    except Exception as e:
        print(f"INFO {name}: {type(e).__name__}: {e}")


def torch_checks():
    import torch

    print("torch", torch.__version__, torch.cuda.get_device_name(0))
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    expect_error("dlarray.from_dlpack(torch cuda)", lambda: dlarray.from_dlpack(t),
                 BufferError, "(kDLCUDA, 0): no backend here holds that memory")

    def to_host(x):
        a = dlarray.from_dlpack(x, device="cpu:0")
        want = x.float().cpu().numpy()  # NumPy has no bfloat16
        got = np.asarray(a.astype("float32"))
        return np.array_equal(got, want) and a.platform() == "cpu", f"{a.dtype} {a.shape}"

    check("from_dlpack(torch cuda, device=cpu)", lambda: to_host(t))
    check("from_dlpack(torch cuda transposed, device=cpu)", lambda: to_host(t.t()))
    check("from_dlpack(torch cuda bf16, device=cpu)",
          lambda: to_host(torch.tensor([1.5, -2.0], dtype=torch.bfloat16, device="cuda")))
    expect_error("from_dlpack(torch cuda, device=cpu, copy=False)",
                 lambda: dlarray.from_dlpack(t, device="cpu:0", copy=False), ValueError, "cop")

    def no_leak():
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        refused = 0
        for _ in range(500):
            x = torch.ones(1 << 16, device="cuda")
            try:
                dlarray.from_dlpack(x)
            except BufferError:
                refused += 1
            del x
        gc.collect()
        torch.cuda.synchronize()
        after = torch.cuda.memory_allocated()
        return refused == 500 and after == before, f"{refused} refused, {before} -> {after} bytes"

    check("refused imports keep no GPU memory", no_leak)

    a = dlarray.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    check("torch.from_dlpack(dlarray).cuda()",
          lambda: (torch.from_dlpack(a).cuda().cpu().tolist() == [[0, 1, 2], [3, 4, 5]], "ok"))
    info("torch.from_dlpack(dlarray, device='cuda')",
         lambda: torch.from_dlpack(a, device="cuda").device)


def jax_checks():
    import jax
    import jax.numpy as jnp

    gpu = jax.devices("gpu")[0]
    print("jax", jax.__version__, gpu)
    j = jax.device_put(jnp.arange(10, dtype=jnp.float32), gpu)
    expect_error("dlarray.from_dlpack(jax gpu)", lambda: dlarray.from_dlpack(j),
                 BufferError, "kDLCUDA")

    def to_host():
        a = dlarray.from_dlpack(j, device="cpu:0")
        return np.array_equal(np.asarray(a), np.arange(10, dtype=np.float32)), str(a.shape)

    check("from_dlpack(jax gpu, device=cpu)", to_host)
    a = dlarray.asarray([1.0, 2.0, 3.0], dtype="float32")
    check("jax.device_put(jnp.from_dlpack(dlarray), gpu)",
          lambda: (jax.device_put(jnp.from_dlpack(a), gpu).tolist() == [1.0, 2.0, 3.0], "ok"))
    info("jnp.from_dlpack(dlarray, device=gpu)", lambda: jnp.from_dlpack(a, device=gpu).devices())


for part in (torch_checks, jax_checks):
    try:
        part()
    except Exception as e:
        report(False, part.__name__, f"{type(e).__name__}: {e}")
print(f"{len(failed)} failed: {failed}")
sys.exit(1 if failed else 0)
