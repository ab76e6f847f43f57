"""The DLPack 1.3 C exchange API, driven through ctypes as a C consumer would."""
import ctypes

import numpy as np
import pytest

import dlarray

ALLOC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                         ctypes.c_void_p, ctypes.c_void_p)
FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
TO_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.py_object))
STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                          ctypes.POINTER(ctypes.c_void_p))


class Api(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("prev_api", ctypes.c_void_p), ("allocator", ctypes.c_void_p),
                ("from_py", ctypes.c_void_p), ("to_py", ctypes.c_void_p),
                ("dltensor_from_py", ctypes.c_void_p), ("stream", ctypes.c_void_p)]


def table(tp):
    cap = tp.__dlpack_c_exchange_api__
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return Api.from_address(get(cap, b"dlpack_exchange_api"))


def test_table_header():
    api = table(dlarray.Array)
    assert (api.major, api.minor) == (1, 3) and not api.prev_api
    assert api.allocator and api.from_py and api.to_py and api.stream
    out = ctypes.c_void_p(1)
    assert STREAM(api.stream)(1, 0, ctypes.byref(out)) == 0 and not out.value


def test_export_and_import_through_the_table():
    api = table(dlarray.Array)
    a = dlarray.asarray([1.0, 2.0, 3.0], dtype="float32")
    managed = ctypes.c_void_p()
    assert FROM_PY(api.from_py)(a, ctypes.byref(managed)) == 0
    obj = ctypes.py_object()
    assert TO_PY(api.to_py)(managed, ctypes.byref(obj)) == 0
    b = obj.value
    assert isinstance(b, dlarray.Array)
    assert b.unsafe_buffer_pointer() == a.unsafe_buffer_pointer()
    assert np.from_dlpack(b).tolist() == [1.0, 2.0, 3.0]


def test_export_errors_set_a_python_exception():
    api = table(dlarray.Array)
    managed = ctypes.c_void_p()
    f = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))(api.from_py)
    with pytest.raises(TypeError):
        f("not an array", ctypes.byref(managed))


def test_torch_goes_through_its_table_zero_copy():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.int32)
    assert hasattr(type(t), "__dlpack_c_exchange_api__")
    a = dlarray.from_dlpack(t)
    assert a.unsafe_buffer_pointer() == t.data_ptr()
    assert np.from_dlpack(a).tolist() == list(range(6))
