"""dlarray.random against jax.random itself (jax 0.10.2, CPU), bit for bit where JAX's
formula has one answer, and on every backend this machine has."""
import numpy as np
import pytest

import dlarray
import dlarray.random as dr

from conftest import devices

jax = pytest.importorskip("jax")


@pytest.fixture(autouse=True)
def x64():
    # 64-bit dtypes need JAX's x64 mode: on for these tests only, not for the whole session.
    with jax.enable_x64(True):
        yield


def jkey(seed):
    return jax.random.PRNGKey(seed)


@pytest.mark.parametrize("seed", [0, 1, 42, 2**31 - 1, -7, 2**40 + 3])
def test_keys_split_and_fold_in_are_jax_keys(seed):
    if -(2**31) <= seed < 2**31:
        # JAX's default mode (32-bit seeds): a negative seed's high word is 0.
        with jax.enable_x64(False):
            assert np.array_equal(np.asarray(dr.key(seed)), np.asarray(jkey(seed)))
    else:
        assert np.array_equal(np.asarray(dr.key(seed)), np.asarray(jkey(seed)))
    k = dr.key(seed)
    jk = jax.random.wrap_key_data(np.asarray(k), impl="threefry2x32")
    for num in [1, 2, 5]:
        want = jax.random.key_data(jax.random.split(jk, num))
        assert np.array_equal(np.asarray(dr.split(k, num)), np.asarray(want))
    want = jax.random.key_data(jax.random.fold_in(jk, 12345))
    assert np.array_equal(np.asarray(dr.fold_in(k, 12345)), np.asarray(want))


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("shape", [(), (7,), (3, 4, 5)])
def test_bits(dtype, shape):
    got = np.asarray(dr.bits(dr.key(3), shape, dtype))
    want = np.asarray(jax.random.bits(jkey(3), shape, dtype))
    assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-3.0, 5.5), (2.0, 2.5), (1e-3, 2e-3)])
def test_uniform(dtype, bounds):
    got = np.asarray(dr.uniform(dr.key(11), (2000,), dtype, *bounds).astype("float64"))
    want = np.asarray(jax.random.uniform(jkey(11), (2000,), dtype, *bounds)).astype(np.float64)
    lo, hi = bounds
    assert got.min() >= np.float64(np.asarray(jax.numpy.asarray(lo, dtype)).astype(np.float64))
    if dtype == "bfloat16" or bounds == (0.0, 1.0):
        # One answer: JAX's values exactly.
        assert np.array_equal(got, want)
    else:
        # float16 too: XLA's CPU code for it depends on the host (on an Intel Xeon its values
        # equal dlarray's float32-then-round exactly; on an AMD EPYC some differ by 2 ulp of
        # the element), within the bound below either way.
        # XLA contracts `floats * span + lo` into a fused multiply-add; dlarray rounds the
        # two steps, as JAX's formula writes them: apart by at most the product's rounding.
        ulp = float(np.spacing(np.asarray(max(abs(lo), abs(hi)), dtype)))
        assert np.all(np.abs(got - want) <= ulp)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_normal(dtype):
    got = np.asarray(dr.normal(dr.key(5), (20000,), dtype).astype("float64"))
    want = np.asarray(jax.random.normal(jkey(5), (20000,), dtype)).astype(np.float64)
    # The same erfinv polynomial: equal but for a few ulps (XLA's log1p and fused steps).
    tol = {"float16": 0, "bfloat16": 0, "float32": 4e-6, "float64": 1e-13}[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "dtype,lo,hi",
    [
        ("int32", 0, 10), ("int32", -2**31, 2**31 - 1), ("uint32", 0, 2**32),
        ("int64", -5, 2**40), ("uint64", 3, 2**62), ("int8", -100, 100), ("uint8", 0, 256),
        ("int16", -40000, 40000), ("uint16", 7, 3), ("int8", 5, 5),
    ],
)
def test_randint(dtype, lo, hi):
    got = np.asarray(dr.randint(dr.key(9), (500,), lo, hi, dtype))
    want = np.asarray(jax.random.randint(jkey(9), (500,), lo, hi, dtype))
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_accepts_jax_and_numpy_keys_and_refuses_others():
    jk = jkey(21)
    a = dr.uniform(jk, (4,))
    b = dr.uniform(np.asarray(jk), (4,))
    assert np.array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(TypeError, match="uint32 array of shape \\(2,\\)"):
        dr.uniform(np.zeros(3, np.uint32), (4,))
    with pytest.raises(ValueError, match="real floating"):
        dr.uniform(jk, (4,), "int32")
    with pytest.raises(ValueError, match="unsigned"):
        dr.bits(jk, (4,), "int32")


@pytest.mark.parametrize("platform", ["cpu", "tpu", "wgpu"])
def test_same_values_on_every_device(platform):
    devs = devices(platform)
    if not devs:
        pytest.skip(f"no {platform} device")
    k = dr.key(8)
    want = np.asarray(dr.uniform(k, (3, 5), "float32", -1.0, 1.0))
    got = dr.uniform(k, (3, 5), "float32", -1.0, 1.0, device=devs[0])
    assert str(got.device) == str(devs[0])
    assert np.array_equal(np.asarray(got.to_device(dlarray.devices("cpu")[0])), want)
    bits = dr.randint(k, (100,), -3, 17, device=devs[0])
    assert np.array_equal(
        np.asarray(bits.to_device(dlarray.devices("cpu")[0])), np.asarray(dr.randint(k, (100,), -3, 17))
    )
