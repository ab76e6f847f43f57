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

    class _Updates:
        """`x.at[idx]`: the array `x` with the elements `x[idx]` selects replaced (`set`) or
        increased (`add`), as JAX's functional updates (arrays are immutable). Any index
        `x[idx]` takes works; where it selects an element twice, `set` keeps the last value
        (as NumPy's assignment) and `add` adds every one (as JAX's). The result has `x`'s
        sharding."""

        def __init__(self, x, idx):
            self.x, self.idx = x, idx

        def get(self):
            return self.x[self.idx]

        def _scatter(self, y):
            # The flat positions idx selects, sorted (stably: duplicates keep their order),
            # with y broadcast over them; per flat position of x, the run of selections at it.
            x = self.x
            device = x.device
            # int32 positions where they fit: devices without 64-bit kernels (wgpu) take them.
            it = m.int32 if x.size < 2**31 else m.int64
            pos = m.reshape(m.arange(x.size, dtype=it, device=device), x.shape)[self.idx]
            if not isinstance(y, Array):
                y = m.asarray(y, dtype=x.dtype, device=device)
            y = m.broadcast_to(y.astype(x.dtype, copy=False), pos.shape)
            pos, y = m.reshape(pos, (-1,)), m.reshape(y, (-1,))
            order = m.argsort(pos, stable=True)
            pos, y = m.take(pos, order), m.take(y, order)
            every = m.arange(x.size, dtype=it, device=device)
            lo = m.searchsorted(pos, every, side="left")
            hi = m.searchsorted(pos, every, side="right")
            return pos, y, lo, hi

        def set(self, y):
            x = self.x
            pos, y, lo, hi = self._scatter(y)
            if pos.size == 0:
                return x
            last = m.take(y, m.clip(hi - 1, 0, pos.size - 1))
            hit = m.reshape(hi > lo, x.shape)
            return m._placed_like(m.where(hit, m.reshape(last, x.shape), x), x)

        def add(self, y):
            # Round r adds the r-th selection of every position selected more than r times:
            # each value added in order and in the array's dtype, as np.add.at (a difference
            # of running sums would lose small values beside large ones, and widen).
            x = self.x
            pos, y, lo, hi = self._scatter(y)
            if pos.size == 0:
                return x
            count = hi - lo
            # A zero of x's dtype: a Python 0 beside a bool array is an int (NumPy's where).
            zero = m.zeros((), dtype=x.dtype, device=x.device)
            for r in range(int(m.max(count).item())):
                k = m.clip(lo + r, 0, pos.size - 1)
                v = m.where(count > r, m.take(y, k), zero)
                x = x + m.reshape(v, x.shape)
            return m._placed_like(x, self.x)

    class _At:
        def __init__(self, x):
            self.x = x

        def __getitem__(self, idx):
            return _Updates(self.x, idx)

    Array.at = property(_At, doc="Functional updates, as JAX's: x.at[idx].set(y), "
                                 ".add(y), .get().")

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
