"""dlarray.from_dlpack / asarray of NumPy, PyTorch and JAX arrays, and capsule lifetimes."""
import gc
import os
import threading

import numpy as np
import pytest

import dlarray
from conftest import capsule_name


def test_numpy_zero_copy_and_views():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in [base, base[:, ::2], base[::-1], base[:, ::-1], base.T, base[1:3, 2:5]]:
        a = dlarray.from_dlpack(view)
        assert a.shape == view.shape and a.dtype == "float32"
        np.testing.assert_array_equal(np.asarray(a), view)
    a = dlarray.from_dlpack(base)
    assert a.unsafe_buffer_pointer() == base.ctypes.data
    base[0, 0] = 99.0  # the same memory
    assert np.from_dlpack(a)[0, 0] == 99.0


@pytest.mark.parametrize("arr", [
    np.array([True, False, True]),
    np.zeros((0,), np.int32),
    np.zeros((3, 0), np.float64),
    np.array(2.5),
    np.array([1 + 2j, 3 - 1j], np.complex64),
    np.arange(6, dtype=np.uint16).reshape(2, 3),
])
def test_numpy_dtypes_sizes_and_scalars(arr):
    a = dlarray.from_dlpack(arr)
    assert a.shape == arr.shape and a.dtype == str(arr.dtype)
    np.testing.assert_array_equal(np.asarray(a), arr)


def test_read_only_numpy_stays_read_only():
    ro = np.arange(4.0)
    ro.flags.writeable = False
    a = dlarray.from_dlpack(ro)
    assert a.is_read_only
    assert a.unsafe_buffer_pointer() == ro.ctypes.data
    # Exported again, it says so (versioned) and NumPy's view is read-only.
    assert not np.from_dlpack(a).flags.writeable


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    a = dlarray.from_dlpack(t)
    assert a.unsafe_buffer_pointer() == t.data_ptr()
    assert np.asarray(a).tolist() == t.tolist()
    v = t.t()[1:, ::2]  # non-contiguous view
    assert np.asarray(dlarray.from_dlpack(v)).tolist() == v.tolist()
    b = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    ab = dlarray.from_dlpack(b)
    assert ab.dtype == "bfloat16" and ab.unsafe_buffer_pointer() == b.data_ptr()
    assert torch.from_dlpack(ab).tolist() == [1.5, -2.0]


def test_jax_arrays():
    import jax.numpy as jnp

    j = jnp.arange(10, dtype=jnp.float32).reshape(2, 5)
    a = dlarray.from_dlpack(j)
    assert a.unsafe_buffer_pointer() == j.unsafe_buffer_pointer()
    assert np.asarray(a).tolist() == np.asarray(j).tolist()
    assert dlarray.asarray(jnp.array([True, False])).dtype == "bool"


def test_device_and_copy_keywords():
    x = np.arange(4.0)
    tpu = dlarray.devices("tpu")[0]
    a = dlarray.from_dlpack(x, device=tpu)
    assert a.device == tpu and a.platform() == "tpu"
    with pytest.raises(ValueError, match="requires a copy"):
        dlarray.from_dlpack(x, device=tpu, copy=False)
    c = dlarray.from_dlpack(x, copy=True)
    assert c.unsafe_buffer_pointer() != x.ctypes.data
    np.testing.assert_array_equal(np.asarray(c), x)
    with pytest.raises(AttributeError):
        dlarray.from_dlpack([1, 2, 3])


class _ForeignGpuArray:
    """A producer on a device dlarray has no backend for (kDLCUDA, 0). Like PyTorch and JAX,
    it exports a host copy when asked for dl_device=(kDLCPU, 0), and refuses with copy=False."""

    def __init__(self, host):
        self.host = host
        self.calls = []

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append({"dl_device": dl_device, "copy": copy})
        if dl_device is None or tuple(dl_device) == (2, 0):
            raise BufferError("test producer: its (fake) GPU memory cannot be exported")
        if tuple(dl_device) != (1, 0):
            raise BufferError("unsupported device requested")
        if copy is False:
            raise ValueError("cannot move (i.e. copy=False) tensor from cuda:0 to cpu without copying.")
        return self.host.copy().__dlpack__(max_version=max_version)


def test_device_keyword_asks_the_producer_for_that_device():
    host = np.arange(6.0).reshape(2, 3)
    cpu = dlarray.devices("cpu")[0]
    x = _ForeignGpuArray(host)
    a = dlarray.from_dlpack(x, device=cpu)
    assert x.calls == [{"dl_device": (1, 0), "copy": None}]
    assert a.device == cpu
    np.testing.assert_array_equal(np.asarray(a), host)
    # A target with no DLPack device of its own (TPU device memory): host, then copied on.
    tpu = dlarray.devices("tpu")[0]
    t = dlarray.from_dlpack(x, device=tpu)
    assert x.calls[-1]["dl_device"] == (1, 0) and t.device == tpu
    np.testing.assert_array_equal(np.asarray(t), host)
    # The producer's copy=False refusal reaches the caller unchanged.
    with pytest.raises(ValueError, match="copy=False"):
        dlarray.from_dlpack(x, device=cpu, copy=False)
    # No device named: the producer's own device, which it cannot export.
    with pytest.raises(BufferError, match="cannot be exported"):
        dlarray.from_dlpack(x)


def test_producer_that_cannot_export_to_the_device_is_asked_for_its_own():
    class HostOnly:
        """Exports only where it lives (CPU) and refuses every dl_device, even its own."""

        def __init__(self):
            self.host = np.arange(4.0)
            self.calls = []

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
            self.calls.append(dl_device)
            if dl_device is not None:
                raise BufferError("unsupported device requested")
            return self.host.__dlpack__(max_version=max_version)

    x = HostOnly()
    tpu = dlarray.devices("tpu")[0]
    a = dlarray.from_dlpack(x, device=tpu)
    assert x.calls == [(1, 0), None] and a.device == tpu
    np.testing.assert_array_equal(np.asarray(a), x.host)


def test_capsules_consumed_once_and_released():
    x = np.arange(3.0)
    cap = x.__dlpack__(max_version=(1, 0))
    a = dlarray.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor_versioned"
    with pytest.raises(ValueError, match="consumed only once"):
        dlarray.from_dlpack(cap)
    del cap
    np.testing.assert_array_equal(np.asarray(a), [0, 1, 2])
    # Our own capsules: dropped unconsumed, the deleter runs (no leak: see the RSS test).
    y = dlarray.asarray([1, 2, 3])
    for kw in [{}, {"max_version": (1, 0)}]:
        c = y.__dlpack__(**kw)
        del c
    gc.collect()


def test_producer_or_consumer_deleted_first():
    # Producer first: the consumer keeps the memory alive.
    x = np.arange(1000.0)
    a = dlarray.from_dlpack(x)
    del x
    gc.collect()
    assert np.asarray(a)[999] == 999.0
    # Consumer first: NumPy's view of our array outlives the dlarray Array.
    y = dlarray.asarray(list(range(1000)), dtype="float64")
    n = np.from_dlpack(y)
    del y
    gc.collect()
    assert n[999] == 999.0


def test_release_on_another_thread():
    a = dlarray.from_dlpack(np.arange(100.0))
    holder = [a]
    del a
    t = threading.Thread(target=holder.clear)  # the last reference dies off the main thread
    t.start()
    t.join()


def rss_kib():
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_a_million_exchanges_do_not_grow_memory():
    # With NumPy and PyTorch both ways (PyTorch's through its C exchange API), and capsules
    # dropped unconsumed: 1.2 million exchanges, flat RSS.
    import torch

    a = dlarray.asarray([1.0, 2.0, 3.0, 4.0])
    n = np.arange(4.0)
    t = torch.arange(4.0)
    for _ in range(20_000):  # warm up allocators
        np.from_dlpack(a)
        dlarray.from_dlpack(n)
        torch.from_dlpack(a)
        dlarray.from_dlpack(t)
        a.__dlpack__()
    gc.collect()
    before = rss_kib()
    for _ in range(300_000):
        np.from_dlpack(a)
        dlarray.from_dlpack(n)
    for _ in range(200_000):
        torch.from_dlpack(a)
        dlarray.from_dlpack(t)
    for _ in range(100_000):  # capsules dropped unconsumed: their destructor frees them
        a.__dlpack__()
        a.__dlpack__(max_version=(1, 0))
    gc.collect()
    grown = rss_kib() - before
    assert grown < 8 * 1024, f"RSS grew by {grown} KiB over 1.2 million exchanges"


def test_deleters_at_interpreter_shutdown_and_from_foreign_threads():
    # Arrays and capsules still alive when the interpreter exits, some made on another
    # thread: their deleters run during shutdown (or not at all) without a crash.
    import subprocess
    import sys

    code = """
import threading
import numpy as np, torch, dlarray
keep = []
a = dlarray.asarray([1.0, 2.0, 3.0])
keep += [np.from_dlpack(a), torch.from_dlpack(a), a.__dlpack__()]
keep += [dlarray.from_dlpack(np.arange(5.0)), dlarray.from_dlpack(torch.arange(5.0))]
def worker():
    keep.append(dlarray.from_dlpack(torch.ones(3)))
    keep.append(np.from_dlpack(dlarray.asarray([4.0])))
threads = [threading.Thread(target=worker) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
daemon = threading.Thread(target=lambda: keep.append(torch.from_dlpack(a)), daemon=True)
daemon.start()
print("ok", len(keep))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().startswith("ok"), r.stdout.decode()
