"""dlarray arrays consumed by NumPy, PyTorch and JAX through __dlpack__."""
import numpy as np
import pytest

import dlarray
from conftest import IS_COPIED, READ_ONLY, capsule_name, devices, versioned_header

NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float16", "float32", "float64", "complex64", "complex128"]
SHAPES = [(), (0,), (1,), (5,), (2, 3), (3, 0), (2, 1, 4), (4, 3, 2, 1)]


def sample(shape, dtype):
    n = int(np.prod(shape)) if shape else 1
    v = (np.arange(n) % 5 - 1).reshape(shape)
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_numpy_consumes_cpu_arrays_zero_copy(dtype, shape):
    want = sample(shape, dtype)
    a = dlarray.asarray(want.tolist() if shape else want.item(), dtype=dtype)
    got = np.from_dlpack(a)
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    np.testing.assert_array_equal(got, want)
    if got.size:
        assert got.ctypes.data == a.unsafe_buffer_pointer()


@pytest.mark.parametrize("versioned", [False, True])
def test_an_unconsumed_capsule_releases_the_memory_once(versioned):
    """Our capsule's destructor runs the deleter exactly once, also while an exception is
    propagating (which it must leave as it was); a consumed capsule leaves it to the
    consumer. Observed through a NumPy array imported zero-copy, whose reference count the
    imported array holds."""
    import sys
    x = np.arange(6, dtype=np.float32)
    base = sys.getrefcount(x)
    kw = {"max_version": (1, 0)} if versioned else {}

    y = dlarray.from_dlpack(x)
    assert sys.getrefcount(x) == base + 1
    cap = y.__dlpack__(**kw)
    del y
    assert sys.getrefcount(x) == base + 1  # the capsule keeps the memory
    del cap
    assert sys.getrefcount(x) == base

    def fails():
        cap = dlarray.from_dlpack(x).__dlpack__(**kw)  # noqa: F841 (dropped while unwinding)
        raise KeyError("kept")

    with pytest.raises(KeyError, match="kept"):
        fails()
    assert sys.getrefcount(x) == base

    consumed = np.from_dlpack(dlarray.from_dlpack(x))
    assert sys.getrefcount(x) == base + 1
    del consumed
    assert sys.getrefcount(x) == base


def test_a_write_is_seen_through_both():
    a = dlarray.asarray([1.0, 2.0, 3.0], dtype="float32")
    n = np.from_dlpack(a)
    n[1] = 42.0
    np.testing.assert_array_equal(np.from_dlpack(a), [1.0, 42.0, 3.0])


def test_capsule_kinds_and_flags():
    a = dlarray.asarray([1, 2, 3], dtype="int32")
    assert capsule_name(a.__dlpack__()) == "dltensor"
    assert capsule_name(a.__dlpack__(max_version=(0, 8))) == "dltensor"
    cap = a.__dlpack__(max_version=(1, 0))
    assert capsule_name(cap) == "dltensor_versioned"
    h = versioned_header(cap)
    assert (h.major, h.minor) == (1, 3) and h.flags == 0 and h.device_type == 1
    h = versioned_header(a.__dlpack__(max_version=(1, 0), copy=True))
    assert h.flags & IS_COPIED
    with pytest.raises(BufferError):
        a.__dlpack__(max_version=(0, 4))
    with pytest.raises(ValueError):
        a.__dlpack__(stream=1)  # host memory: only stream=None


def test_tpu_memory_kinds():
    tpu = devices("tpu")[0]
    x = dlarray.asarray([[1.0, 2.0], [3.0, 4.0]], dtype="float32")
    pinned = x.to_device(tpu, memory_kind="pinned_host")
    assert pinned.__dlpack_device__() == (20, tpu_index(tpu))
    # NumPy accepts no kDLTPUHost tensor, but asks for (kDLCPU, 0) with device="cpu":
    # pinned host memory is host memory, exported in place.
    got = np.from_dlpack(pinned, device="cpu")
    assert got.ctypes.data == pinned.unsafe_buffer_pointer()
    with pytest.raises((BufferError, RuntimeError), match="Unsupported device"):
        np.from_dlpack(pinned)  # NumPy 2.4 says RuntimeError
    # PyTorch and JAX (CPU builds) know no kDLTPUHost (JAX's own value 20) and say so, as
    # they do for a JAX TPU pinned-host array.
    import jax.numpy as jnp
    import torch

    with pytest.raises(TypeError, match="DLDeviceType: 20"):
        jnp.from_dlpack(pinned)
    with pytest.raises(BufferError, match="device_type: 20"):
        torch.from_dlpack(pinned)
    # Device memory: the host-copy fallback, flagged IS_COPIED.
    hbm = x.to_device(tpu)
    assert hbm.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(hbm), [[1, 2], [3, 4]])
    assert torch.from_dlpack(hbm).tolist() == [[1, 2], [3, 4]]
    assert jnp.from_dlpack(hbm).tolist() == [[1, 2], [3, 4]]
    assert versioned_header(hbm.__dlpack__(max_version=(1, 0))).flags & IS_COPIED


def tpu_index(dev):
    return int(dev.name.split(":")[1])


def test_wgpu_falls_back_to_host():
    for gpu in devices("wgpu"):
        x = dlarray.asarray([[1, 2, 3], [4, 5, 6]], dtype="int32").to_device(gpu)
        assert x.platform() == "wgpu"
        np.testing.assert_array_equal(np.from_dlpack(x), [[1, 2, 3], [4, 5, 6]])
        assert versioned_header(x.__dlpack__(max_version=(1, 0))).flags & IS_COPIED
        torch = pytest.importorskip("torch")
        assert torch.from_dlpack(x).tolist() == [[1, 2, 3], [4, 5, 6]]
        import jax.numpy as jnp

        assert jnp.from_dlpack(x).tolist() == [[1, 2, 3], [4, 5, 6]]


TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
                "complex128"]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_consumes_zero_copy(dtype):
    torch = pytest.importorskip("torch")
    a = dlarray.asarray([[0, 1, 2], [3, 1, 0]], dtype=dtype)
    t = torch.from_dlpack(a)
    assert str(t.dtype) == f"torch.{dtype}"
    assert t.data_ptr() == a.unsafe_buffer_pointer()
    want = [[0, 1, 2], [3, 1, 0]] if dtype != "bool" else [[False, True, True], [True, True, False]]
    assert t.tolist() == want


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint8", "float16", "bfloat16",
                                   "float32", "complex64"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 1, 4)])
def test_jax_consumes(dtype, shape):
    import jax
    import jax.numpy as jnp

    want = sample(shape, "float32").astype(dtype if dtype != "bfloat16" else "float32")
    a = dlarray.asarray(want.tolist() if shape else want.item(), dtype=dtype)
    j = jnp.from_dlpack(a)
    assert j.shape == shape and str(j.dtype) == dtype
    np.testing.assert_array_equal(np.asarray(j).astype(want.dtype), want)
    j2 = jax.dlpack.from_dlpack(a)
    assert j2.shape == shape
    if j.size and dtype not in ("bool",):
        # Zero-copy: JAX aliases our 64-byte-aligned buffer.
        assert j.unsafe_buffer_pointer() == a.unsafe_buffer_pointer()


def test_strict_policy_raises_jax_errors():
    tpu = devices("tpu")[0]
    x = dlarray.asarray([1.0, 2.0])
    hbm = x.to_device(tpu)
    dlarray.set_dlpack_policy("strict")
    msg = "__dlpack__ device only supported for TPU pinned host memory"
    with pytest.raises(BufferError, match=msg):
        hbm.__dlpack_device__()
    with pytest.raises(BufferError, match=msg):
        hbm.__dlpack__()
    with pytest.raises(BufferError, match=msg):
        np.from_dlpack(hbm)
    for gpu in devices("wgpu"):
        g = x.to_device(gpu)
        with pytest.raises(BufferError) as e:
            g.__dlpack__()
        assert str(e.value) == (
            "__dlpack__ device only supported for CPU, GPU and TPU pinned host, "
            "got platform: wgpu"
        )
    sharded = dlarray.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).shard(devices("tpu")[:2])
    assert [d for d, _ in sharded.shards] == ["tpu:0", "tpu:1"]
    with pytest.raises(BufferError) as e:
        sharded.__dlpack_device__()
    assert str(e.value) == "__dlpack__ only supported for unsharded arrays."
    with pytest.raises(BufferError, match="only supported for unsharded arrays"):
        sharded.__dlpack__()
    dlarray.set_dlpack_policy("host_fallback")
    # The default policy gathers the shards into one host copy.
    np.testing.assert_array_equal(np.from_dlpack(sharded), [[1, 2], [3, 4], [5, 6]])
    with pytest.raises(ValueError):
        dlarray.set_dlpack_policy("lenient")


def test_copy_false_to_another_device_is_a_value_error():
    tpu = devices("tpu")[0]
    hbm = dlarray.asarray([1.0, 2.0]).to_device(tpu)
    with pytest.raises((ValueError, BufferError)):
        hbm.__dlpack__(dl_device=(1, 0), copy=False)


def test_dlpack_arguments_are_checked_like_a_python_signature():
    import inspect

    a = dlarray.asarray([1.0, 2.0])
    sig = inspect.signature(dlarray.Array.__dlpack__)
    assert list(sig.parameters) == ["self", "stream", "max_version", "dl_device", "copy"]
    assert all(p.default is None for n, p in sig.parameters.items() if n != "self")
    # Keywords given as non-interned strings (as C callers such as NumPy build them).
    kw = {"".join(["max_", "version"]): (1, 0), "".join(["co", "py"]): None}
    assert capsule_name(a.__dlpack__(**kw)) == "dltensor_versioned"
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        a.__dlpack__(foo=1)
    with pytest.raises(TypeError, match="takes 0 positional arguments but 1 were given"):
        a.__dlpack__(None)
    with pytest.raises(TypeError, match="argument 'max_version'"):
        a.__dlpack__(max_version="1.0")
    with pytest.raises(TypeError, match="argument 'copy'"):
        a.__dlpack__(copy=3)
    with pytest.raises(TypeError, match="argument 'dl_device'"):
        a.__dlpack__(dl_device=1)
    with pytest.raises(TypeError, match="stream must be an int or None"):
        a.__dlpack__(stream="s")
    with pytest.raises(TypeError):
        dlarray.Array.__dlpack__(np.zeros(2))
    np.testing.assert_array_equal(np.from_dlpack(a), [1.0, 2.0])
