"""Python scalars as operands: weak, as NumPy 2 (NEP 50) and the array API take them. The
scalar takes the array's dtype when its kind fits, its kind's default dtype otherwise; an int
outside the array's integer range raises OverflowError, except in comparisons, which answer.
Every case is checked against NumPy itself."""
import operator

import numpy as np
import pytest

import dlarray

DTYPES = ["bool", "int8", "uint8", "int32", "uint64", "int64", "float32", "float64", "complex64"]
SCALARS = [True, 0, 3, -2, 2.5, -0.0, 1 + 2j]
ARITH = [operator.add, operator.sub, operator.mul, operator.truediv]
OPS = ARITH + [operator.lt, operator.eq, operator.ne, operator.ge]


def values(dtype):
    if dtype == "bool":
        return np.array([True, False, True])
    return np.array([1, 2, 7]).astype(dtype)


def numpy_result(f):
    try:
        with np.errstate(all="ignore"):
            return f(), None
    except Exception as e:  # noqa: BLE001 - which error NumPy raises is the point
        return None, type(e)


@pytest.mark.parametrize("dtype", DTYPES)
def test_operators_with_python_scalars_follow_numpy(dtype):
    n = values(dtype)
    d = dlarray.asarray(n)
    for s in SCALARS:
        for op in OPS:
            if (isinstance(s, complex) or dtype.startswith("complex")) and op in (
                operator.lt,
                operator.ge,
            ):
                continue  # complex ordering: outside the array API (dlarray refuses it)
            for reflected in (False, True):
                call = (lambda x: op(s, x)) if reflected else (lambda x: op(x, s))
                want, err = numpy_result(lambda: call(n))
                if err is not None:
                    # NumPy refuses (bool - bool, ...): so do we, in some way.
                    with pytest.raises(Exception):
                        call(d)
                    continue
                got = call(d)
                where = f"{op.__name__}({'s, x' if reflected else 'x, s'}) {dtype} {s!r}"
                assert got.dtype == str(want.dtype), where
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=where)


def test_out_of_range_ints_raise_except_in_comparisons():
    n = np.array([1, 200], np.uint8)
    d = dlarray.asarray(n)
    for s in (300, -1, 2**70):
        with pytest.raises(OverflowError):
            d + s
        with pytest.raises(OverflowError):
            s * d
    for s in (300, -1, -(2**70), 2**70):
        for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
            np.testing.assert_array_equal(np.asarray(op(d, s)), op(n, s), err_msg=f"{op} {s}")
            np.testing.assert_array_equal(np.asarray(op(s, d)), op(s, n), err_msg=f"{op} {s}")
        # The functions too, either way round (they raised OverflowError).
        for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
            f, g = getattr(dlarray, name), getattr(np, name)
            np.testing.assert_array_equal(np.asarray(f(d, s)), g(n, s), err_msg=f"{name} {s}")
            np.testing.assert_array_equal(np.asarray(f(s, d)), g(s, n), err_msg=f"{name} {s}")
    with pytest.raises(OverflowError, match="Python integer 128 out of bounds for int8"):
        dlarray.asarray([1], dtype="int8") + 128


def test_integer_arrays_to_negative_int_powers_raise_as_numpy():
    n = np.array([1, 2, -3], np.int32)
    d = dlarray.asarray(n)
    for f in [lambda x: x ** -1, lambda x: x ** -2]:
        with pytest.raises(ValueError) as numpy_error:
            f(n)
        with pytest.raises(ValueError) as ours:
            f(d)
        assert str(ours.value) == str(numpy_error.value)
    with pytest.raises(ValueError, match="negative integer powers"):
        dlarray.pow(d, -1)
    # A negative base is fine, and a float exponent computes in floats.
    for f in [lambda x: (-2) ** abs(x), lambda x: x ** -1.0, lambda x: x ** 2]:
        got, want = f(d), f(n)
        assert got.dtype == str(want.dtype)
        np.testing.assert_allclose(np.asarray(got), want)


def test_ints_past_128_bits_as_numpy():
    """An int no 128-bit integer holds (2**200) is a float beside a float array, answers a
    comparison and raises NumPy's OverflowError in integer arithmetic: it raised pyo3's
    "int too big to convert" everywhere."""
    big = 2**200
    f, i = np.array([1.0, 2.0]), np.array([1, 2])
    df, di = dlarray.asarray(f), dlarray.asarray(i)
    for got, want in [(df + big, f + big), (big * df, big * f), (di == big, i == big),
                      (di > -big, i > -big), (dlarray.maximum(df, big), np.maximum(f, big)),
                      (dlarray.full(2, big, dtype="float64"), np.full(2, big, dtype=np.float64)),
                      (dlarray.full_like(df, big), np.full_like(f, big)),
                      (dlarray.asarray([1j]) + big, np.array([1j]) + big)]:
        assert got.dtype == str(want.dtype)
        np.testing.assert_array_equal(np.asarray(got), want)
    for make in [lambda m, x: x + big, lambda m, x: x + 2**64, lambda m, x: m.full_like(x, big)]:
        with pytest.raises(OverflowError) as numpy_error:
            make(np, i)
        with pytest.raises(OverflowError) as ours:
            make(dlarray, di)
        assert str(ours.value) == str(numpy_error.value)
    with pytest.raises(OverflowError, match="too large"):
        dlarray.full(2, big)


def test_bool_arithmetic_follows_numpy():
    """+ and maximum are or, * and minimum and; floor division, remainder and powers
    compute in int8; subtraction is refused (dlarray refused all of these)."""
    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    a, b = dlarray.asarray(p), dlarray.asarray(q)
    for name in ("add", "multiply", "maximum", "minimum", "floor_divide", "remainder", "pow",
                 "divide"):
        with np.errstate(all="ignore"):
            want = getattr(np, "power" if name == "pow" else name)(p, q)
        got = getattr(dlarray, name)(a, b)
        assert got.dtype == str(want.dtype), name
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
    np.testing.assert_array_equal(np.asarray(a + True), p + True)
    np.testing.assert_array_equal(np.asarray(a * b), p * q)
    with pytest.raises(TypeError):
        a - b
    assert dlarray.abs(a).dtype == "bool" and abs(a).dtype == "bool"
    np.testing.assert_array_equal(np.asarray(dlarray.abs(a)), np.abs(p))


def test_functions_take_weak_scalars_too():
    a = dlarray.asarray([1, 2])
    got = dlarray.add(a, 2.5)
    assert got.dtype == "float64"
    np.testing.assert_array_equal(np.asarray(got), [3.5, 4.5])
    f = dlarray.asarray([1.0], dtype="float32")
    assert dlarray.multiply(3, f).dtype == "float32"
    assert dlarray.multiply(f, 1j).dtype == "complex64"


def test_numpy_scalars_and_number_subclasses_are_strong():
    import enum

    class Three(enum.IntEnum):
        A = 3

    f32 = np.array([1.5, 2.5], np.float32)
    u8 = np.array([1, 200], np.uint8)
    for n, s in [(f32, np.float64(2)), (f32, np.float32(2)), (u8, np.int64(300)),
                 (u8, np.uint8(3)), (u8, Three.A), (f32, np.complex64(1j))]:
        want = n * s
        got = dlarray.asarray(n) * s
        assert got.dtype == str(want.dtype), (n.dtype, s)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        got = s * dlarray.asarray(n)
        assert got.dtype == str(want.dtype), (s, n.dtype)


def test_a_scalar_raised_to_an_array():
    for n, s in [(np.array([1, 2, 3]), 2), (np.array([1, 2, 3]), 2.5),
                 (np.array([0.5, 2.0], np.float32), 2), (np.array([0.5, 2.0], np.float32), 3.0)]:
        want = s ** n
        got = s ** dlarray.asarray(n)
        assert got.dtype == str(want.dtype), (s, n.dtype)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
