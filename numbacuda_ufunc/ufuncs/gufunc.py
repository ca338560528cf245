"""``guvectorize``: generalized ufuncs with NumPy layout signatures such as
``(m,n),(n,p)->(m,p)``.

Each thread runs the Python function once on views of its loop index, as in Numba; the
loop dimensions broadcast like NumPy's (Numba refuses that). The call path is C++.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import _core
from ..compiler import translate
from ..errors import CompileError
from ..interop import _dask, _protocol
from ..interop._pickling import function_ref, global_name
from ..toolchain import _sass
from ..types import Array, Scalar, Signature, parse_signature_for
from ._help import gufunc_doc
from ._keywords import gufunc_call_with_keywords
from .ufunc import TARGETS, SignatureSpec, _arity, _take_identity_of, check_options

__all__ = ["guvectorize", "GUFunc", "parse_layout"]

_OPTIONS = ("target", "fastmath", "cache", "writable_args", "nopython", "forceobj",
            "identity", "is_dynamic", "boundscheck")
_TOKEN = re.compile(r"\s*(?:(?P<arrow>->)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<num>\d+)|(?P<punct>[(),]))")


def parse_layout(layout: str):
    """NumPy's gufunc signature grammar: ``"(m,n),(n,p)->(m,p)"``, ``"()->()"``,
    ``"(n)->(),()"``, fixed sizes ``"(n,3)"``, whitespace anywhere.

    Returns (inputs, outputs): lists of operands, each a tuple of core dimensions (a name
    or an int). Raises ValueError naming the offending token.
    """
    if not isinstance(layout, str):
        raise TypeError(f"guvectorize(): layout must be a string such as '(m,n)->(n)' "
                        f"(got {layout!r})")
    tokens = []
    pos = 0
    text = layout.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"guvectorize(): malformed layout {layout!r}: unexpected "
                             f"{text[pos:].strip()[:1]!r} at position {pos}")
        tokens.append((m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1

    def fail(i, expected):
        got = repr(tokens[i][1]) if i < len(tokens) else "the end"
        raise ValueError(f"guvectorize(): malformed layout {layout!r}: expected {expected}, "
                         f"got {got}")

    def operand_list(i):
        ops = []
        while True:
            if i >= len(tokens) or tokens[i][1] != "(":
                fail(i, "'('")
            i += 1
            dims = []
            if i < len(tokens) and tokens[i][1] == ")":
                i += 1
            else:
                while True:
                    if i >= len(tokens) or tokens[i][0] not in ("name", "num"):
                        fail(i, "a dimension name or size")
                    kind, value, _ = tokens[i]
                    if kind == "num" and int(value) >= 2**63:
                        raise ValueError(f"guvectorize(): malformed layout {layout!r}: the "
                                         f"fixed size {value} does not fit int64")
                    dims.append(int(value) if kind == "num" else value)
                    i += 1
                    if i < len(tokens) and tokens[i][1] == ",":
                        i += 1
                        continue
                    if i < len(tokens) and tokens[i][1] == ")":
                        i += 1
                        break
                    fail(i, "',' or ')'")
            ops.append(tuple(dims))
            if i < len(tokens) and tokens[i][1] == ",":
                i += 1
                continue
            return ops, i

    inputs, i = operand_list(0)
    if i >= len(tokens) or tokens[i][0] != "arrow":
        fail(i, "'->'")
    outputs, i = operand_list(i + 1)
    if i != len(tokens):
        fail(i, "the end")
    return inputs, outputs


def _loop_kinds(sig: Signature, core, api: str):
    """How each operand reaches the function: 0 array view, 1 scalar by value, 2 a `()`
    core as a one-element array (gufunc.cuh's garg)."""
    nin_out = len(core)
    if len(sig.args) != nin_out:
        raise TypeError(f"{api}: signature {sig} has {len(sig.args)} argument(s), the layout "
                        f"has {nin_out} operand(s)")
    kinds = []
    for k, (t, dims) in enumerate(zip(sig.args, core)):
        if isinstance(t, Scalar):
            if dims:
                raise TypeError(f"{api}: argument {k + 1} of {sig} is a scalar but its core "
                                f"dimensions are {_fmt(dims)}")
            kinds.append(1)
        elif isinstance(t, Array) and t.ndim == len(dims):
            kinds.append(0)
        elif isinstance(t, Array) and not dims and t.ndim == 1:
            kinds.append(2)
        else:
            raise TypeError(f"{api}: argument {k + 1} of {sig} has {t.ndim} dimension(s) but "
                            f"its core dimensions are {_fmt(dims)}")
    return kinds


def _fmt(dims) -> str:
    return "(" + ",".join(map(str, dims)) + ")"


class GUFunc(_core.GUFunc):
    """A gufunc made by :func:`guvectorize`: ``g(*inputs)``, ``g(*inputs, *outputs)``,
    ``g(*inputs, out=o)`` or ``out=(o1, o2)``; ``stream=``."""

    _nu_gufunc = True  # the translator refuses calls of it (Numba: untyped global name)

    if TYPE_CHECKING:  # the engine's tp_call (src/bindings/gufunc.cpp), for type checkers
        __name__: str
        nin: int
        nout: int
        nargs: int
        ntypes: int
        types: list[str]
        signature: str

        def __call__(self, *args: Any, out: Any = None, stream: Any = 0,
                     **kwargs: Any) -> Any: ...

    def __init__(self, pyfunc, signatures, layout, target, fastmath, cache, writable_args):
        api = f"guvectorize({getattr(pyfunc, '__name__', pyfunc)!r})"
        if target not in TARGETS:
            raise ValueError(f"{api}: target must be one of {', '.join(TARGETS)} (got {target!r})")
        inputs, outputs = parse_layout(layout)
        core = inputs + outputs
        nargs = _arity(pyfunc, api)
        if nargs != len(core):
            raise TypeError(f"{api}: the layout {layout!r} has {len(core)} operand(s), the "
                            f"function takes {nargs}")
        names = []
        encoded = []
        for dims in core:
            row = []
            for d in dims:
                if isinstance(d, int):
                    row.append((-1, d))
                else:
                    if d not in names:
                        names.append(d)
                    row.append((names.index(d), -1))
            encoded.append(row)
        writable = _writable_indices(pyfunc, writable_args, len(inputs), api)
        super().__init__(pyfunc.__name__, len(inputs), len(outputs), encoded, names, target,
                         bool(fastmath), writable)
        _take_identity_of(self, pyfunc)
        self.__doc__ = gufunc_doc(self.__name__, pyfunc, layout.replace(" ", ""), len(inputs),
                                  len(outputs), target)  # help(): the call and its keywords
        self.signature = layout.replace(" ", "")  # NumPy's attribute: dask.apply_gufunc uses it
        self.layout = self.signature
        self.identity = None
        self.target = target
        self.fastmath = bool(fastmath)
        self.cache = cache
        self.writable_args = tuple(writable)
        self._core_dims = core
        self._translated = {}
        sigs = [signatures] if isinstance(signatures, (str, Signature)) else list(signatures or [])
        if not sigs:
            raise TypeError(f"{api}: guvectorize needs at least one signature such as "
                            f"'void(float32[:], float32[:])'")
        for sig in sigs:
            self.add(sig)

    @property
    def signatures(self) -> list:
        return list(self._translated)

    def add(self, sig) -> None:
        api = f"guvectorize({self.__name__!r})"
        sig = parse_signature_for(api, sig)
        if sig.return_type is not None:
            raise TypeError(f"{api}: guvectorized functions cannot return values: signature "
                            f"{sig} specifies {sig.return_type} return type; write results "
                            f"into the output arguments")
        kinds = _loop_kinds(sig, self._core_dims, api)
        for k in range(self.nin, self.nin + self.nout):
            if kinds[k] == 1:
                raise TypeError(f"{api}: output argument {k + 1} of {sig} must be an array "
                                f"(outputs are written in place)")
        tf = translate(self.py_func, sig.args)
        if tf.foreign:
            raise CompileError(f"{api}: the function calls the foreign device function"
                               f"{'s' if len(tf.foreign) > 1 else ''} {', '.join(tf.foreign)}; "
                               f"foreign functions (cuda.declare_device) are linked into "
                               f"@cuda.jit kernels only")
        dtypes = [(t if isinstance(t, Scalar) else t.dtype).dtype.str for t in sig.args]
        self._add_loop(dtypes, kinds, tf.name, tf.source)
        self._translated[sig] = tf

    def _call_keywords(self, args, kwargs):
        """A call with axes=, axis= or keepdims= (the engine sends it here)."""
        if _protocol.applies(args, kwargs):
            return _protocol.call(self, args, kwargs)
        if any(_dask.is_dask_array(a) for a in args):
            return _dask.gufunc_call(self, args, kwargs)
        return gufunc_call_with_keywords(self, args, kwargs)

    def inspect_cuda(self) -> dict:
        """Signature -> the CUDA C++ of the translated function."""
        return {str(sig): tf.cuda_source for sig, tf in self._translated.items()}

    def _dask_call(self, *args, **kwargs):
        """The engine found a Dask array among the inputs: dask.array.apply_gufunc."""
        result = _protocol.dask_call_deferred(self, args, kwargs)
        if result is not _protocol.NOT_DEFERRED:
            return result
        return _dask.gufunc_call(self, args, kwargs)

    def _protocol_call(self, *args, **kwargs):
        """The engine found an argument NumPy's protocol concerns (an ndarray subclass,
        xarray, pandas...): NEP 13 overrides, else NumPy's __array_wrap__ (_protocol.py)."""
        return _protocol.call(self, args, kwargs)

    def __reduce__(self):
        # Pickled by the function, signatures and options (Dask's distributed workers).
        return global_name(self) or (_rebuild, (
            function_ref(self.py_func), [str(s) for s in self._translated], self.layout, self.target,
            self.fastmath, self.cache, self.writable_args))

    def inspect_sass(self, nloop=1) -> dict:
        """Signature -> SASS of the loop's kernel over ``nloop`` loop dimensions (what a
        call with that many broadcast outer dimensions runs), from the CUBIN NVRTC builds
        for the current device (sm_90 with no device); no GPU needed."""
        return {str(sig): _sass.sources_sass((self._loop_source(i, nloop)[1],), self.fastmath)
                for i, sig in enumerate(self._translated)}

    def __repr__(self):
        return (f"<numbacuda_ufunc.GUFunc '{self.__name__}' {self.signature} "
                f"target={self.target} types={self.types}>")


def _rebuild(pyfunc, signatures, layout, target, fastmath, cache, writable_args):
    return GUFunc(pyfunc, signatures, layout, target, fastmath, cache, writable_args)


def _writable_indices(pyfunc, writable_args, nin, api):
    import inspect

    params = list(inspect.signature(pyfunc).parameters)
    out = []
    for w in writable_args or ():
        if isinstance(w, str):
            if w not in params[:nin]:
                raise ValueError(f"{api}: writable_args names {w!r}, which is not an input "
                                 f"(inputs: {', '.join(params[:nin])})")
            out.append(params.index(w))
        elif isinstance(w, int) and not isinstance(w, bool) and 0 <= w < nin:
            out.append(w)
        else:
            raise ValueError(f"{api}: writable_args entries are input names or indices 0.."
                             f"{nin - 1} (got {w!r})")
    return out


_core.install_fast_gufunc_call(GUFunc)


def guvectorize(signatures: SignatureSpec, layout: str, target: str = "cuda",
                fastmath: bool = False, cache: bool = True, writable_args: Any = (),
                **options: Any) -> Callable[[Callable[..., Any]], GUFunc]:
    """Make a generalized ufunc from a Python function that writes its results into its
    output arguments (Numba's ``@guvectorize``).

    Parameters
    ----------
    signatures : str, type signature or list of them
        The loops: ``"void(float32[:,:], float32[:,:])"``, ``"(f8[:], f8[:], f8[:])"`` or
        type objects; a scalar type for a ``()`` input passes it by value.
    layout : str
        NumPy's gufunc signature, such as ``"(m,n),(n,p)->(m,p)"``.
    target : {'cuda', 'cpu', 'parallel'}, optional
        As for :func:`vectorize`.
    fastmath : bool, optional
        Relax IEEE semantics.
    cache : bool, optional
        Accepted for Numba's sake: compiled kernels are always cached.
    writable_args : tuple of int or str, optional
        Inputs (by position or name) the function writes, copied back to host arrays.
    **options
        ``boundscheck=True`` checks indices on the ``cpu``/``parallel`` targets.

    Returns
    -------
    callable
        A decorator that makes the :class:`GUFunc`; ``help()`` of it shows its call
        signature and keywords.

    Examples
    --------
    >>> import numpy as np
    >>> from numbacuda_ufunc import guvectorize
    >>> @guvectorize(["void(float64[:], float64[:])"], "(n)->()")
    ... def total(x, res):
    ...     s = 0.0
    ...     for v in x:
    ...         s += v
    ...     res[0] = s
    >>> total(np.arange(6.0).reshape(2, 3))
    array([ 3., 12.])
    """
    check_options("guvectorize()", options, _OPTIONS, target)

    def decorate(pyfunc):
        g = GUFunc(pyfunc, signatures, layout, target, fastmath, cache, writable_args)
        # Numba's option: index checks for cpu/parallel (emulation of cuda always checks).
        g._boundscheck = bool(options.get("boundscheck") or False)
        g.boundscheck = g._boundscheck
        return g

    return decorate
