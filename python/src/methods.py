"""The Array methods NumPy's and JAX's arrays have beyond the array API's, each the module
function of the same meaning, so that it behaves exactly as that function does (a method
returns a new array where NumPy's would change the array in place: dlarray arrays, as JAX's,
are immutable). Run once when the module loads (python/src/methods.rs)."""


def install(Array, m):
    # NumPy's positional order (`out` second); `out` must be None, as for the reductions.
    def _no_out(out):
        if out is not None:
            raise TypeError("out= is not supported: dlarray arrays are immutable (out must be None)")

    def argmax(self, axis=None, out=None, *, keepdims=False):
        """The index of the largest element (of the flattened array when axis is None)."""
        _no_out(out)
        return m.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        """The index of the smallest element (of the flattened array when axis is None)."""
        _no_out(out)
        return m.argmin(self, axis=axis, keepdims=keepdims)

    def sort(self, axis=-1, descending=False, stable=True):
        """A sorted copy (NumPy sorts in place; arrays here are immutable, as JAX's)."""
        return m.sort(self, axis=axis, descending=descending, stable=stable)

    def argsort(self, axis=-1, descending=False, stable=True):
        return m.argsort(self, axis=axis, descending=descending, stable=stable)

    def _flat_or(self, axis):
        return (m.reshape(self, (-1,)), 0) if axis is None else (self, axis)

    def cumsum(self, axis=None, dtype=None, out=None):
        """NumPy's: over the flattened array when axis is None."""
        _no_out(out)
        x, axis = _flat_or(self, axis)
        return m.cumulative_sum(x, axis=axis, dtype=dtype)

    def cumprod(self, axis=None, dtype=None, out=None):
        _no_out(out)
        x, axis = _flat_or(self, axis)
        return m.cumulative_prod(x, axis=axis, dtype=dtype)

    def ravel(self):
        return m.reshape(self, (-1,))

    def transpose(self, *axes):
        """The axes reversed, or in the order given (as separate ints or one sequence)."""
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0])
        return m.permute_dims(self, axes or tuple(range(self.ndim))[::-1])

    def swapaxes(self, axis1, axis2):
        axes = list(range(self.ndim))
        axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
        return m.permute_dims(self, tuple(axes))

    def copy(self):
        """A copy in fresh memory, on the same devices."""
        return m.asarray(self, copy=True)

    def conj(self):
        return m.conj(self)

    def round(self, decimals=0):
        """Halves to even, as NumPy's; `decimals` scales by 10**decimals as NumPy does."""
        if decimals == 0:
            return m.round(self)
        if self.dtype in (m.bool,) or "int" in self.dtype.name:
            if decimals >= 0:
                return self
            scale = 10 ** -decimals
            return m.round(self / scale).astype(self.dtype) * scale
        scale = 10.0 ** decimals
        return m.round(self * scale) / scale

    def repeat(self, repeats, axis=None):
        return m.repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None):
        """NumPy's: from the flattened array when axis is None."""
        x, axis = _flat_or(self, axis)
        return m.take(x, indices if isinstance(indices, Array) else m.asarray(indices), axis=axis)

    def nonzero(self):
        return m.nonzero(self)

    def dot(self, other):
        """NumPy's dot: a product for 0-d operands, matmul up to 2-D, else the sum over the
        last axis of this array and the second-to-last of `other`."""
        other = other if isinstance(other, Array) else m.asarray(other)
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        if self.ndim <= 2 and other.ndim <= 2:
            return m.matmul(self, other)
        return m.tensordot(self, other, axes=([-1], [-2 if other.ndim > 1 else -1]))

    def __round__(self, ndigits=None):
        """Python's round(x) and round(x, n): an array, as NumPy's."""
        return round(self, ndigits or 0)

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return other // self, other % self

    def __format__(self, spec):
        """f"{x:.3f}" of a 0-d array formats its value, as NumPy's; str(x) without a spec."""
        if not spec:
            return str(self)
        if self.ndim == 0:
            return format(self.item(), spec)
        raise TypeError("unsupported format string passed to dlarray.Array.__format__")

    for f in (argmax, argmin, sort, argsort, cumsum, cumprod, ravel, transpose, swapaxes,
              copy, conj, round, repeat, take, nonzero, dot, __round__, __divmod__,
              __rdivmod__, __format__):
        f.__qualname__ = "Array." + f.__name__
        setattr(Array, f.__name__, f)
    Array.conjugate = conj
    Array.real = property(lambda self: m.real(self), doc="The real part (the array itself for real dtypes).")
    Array.imag = property(lambda self: m.imag(self), doc="The imaginary part (zeros for real dtypes).")
    Array.itemsize = property(lambda self: self.dtype.itemsize, doc="Bytes per element.")
    Array.nbytes = property(lambda self: self.size * self.dtype.itemsize, doc="Bytes of all elements.")
