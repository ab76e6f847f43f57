"""Shared helpers: the devices of each platform, and the DLPack flags of a capsule."""
import ctypes
import os

import pytest

import dlarray

REQUIRED = [b for b in os.environ.get("DLARRAY_REQUIRE", "").split(",") if b]


def devices(platform):
    found = dlarray.devices(platform)
    if not found and platform in REQUIRED:
        pytest.fail(f"backend {platform} is required (DLARRAY_REQUIRE) but has no device")
    return found


class DLManagedTensorVersioned(ctypes.Structure):
    # version (2 x u32), manager_ctx, deleter, flags, then the DLTensor.
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
    ]


IS_COPIED = 1 << 1
READ_ONLY = 1 << 0

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def capsule_name(capsule):
    return _get_name(capsule).decode()


def versioned_header(capsule):
    """The header of an unconsumed `dltensor_versioned` capsule."""
    p = _get_pointer(capsule, b"dltensor_versioned")
    return DLManagedTensorVersioned.from_address(p)


@pytest.fixture(autouse=True)
def host_fallback_policy():
    dlarray.set_dlpack_policy("host_fallback")
    yield
    dlarray.set_dlpack_policy("host_fallback")
