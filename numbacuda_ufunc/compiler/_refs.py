"""What a name or an expression stands for during translation: a typed C++ expression
(:class:`Val`) or a compile-time value that is not a number (the :class:`Ref` kinds).
Below ``_values.py`` so that the value kinds it delegates casts to (``_fp8``, ``_datetime``)
build them without importing it."""

from __future__ import annotations

__all__ = [
    "BuiltinRef",
    "DtypeCallRef",
    "LibFuncRef",
    "LiteralRef",
    "ModuleRef",
    "PyFuncRef",
    "Ref",
    "StringRef",
    "TypeRef",
    "UnsupportedDtypeRef",
    "UserModuleRef",
    "Val",
]


class Ref:
    """A compile-time value that is not a number: it can be called or have attributes.
    Refs are equal when they denote the same thing, so a device function that takes one
    as an argument (a dtype, a function, ``cuda.atomic.add``) is specialised once per
    distinct value."""

    name = "?"

    def __repr__(self):
        return self.name

    def _key(self):
        return self.name

    def token(self) -> str:
        """Identifies the value in a generated symbol's hash (stable across processes
        where the value is)."""
        return self.name

    def __eq__(self, other):
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))


class ModuleRef(Ref):
    def __init__(self, module):
        self.module = module
        self.name = f"module {module.__name__}"


class UserModuleRef(Ref):
    """Any other module (the user's own): its attributes are read at compile time and
    classified like globals (``mymod.helper(x)``, ``mymod.SCALE``)."""

    def __init__(self, module):
        self.module = module
        self.name = f"module {module.__name__}"

    def _key(self):
        return self.module.__name__


class PyFuncRef(Ref):
    """A Python function (or cuda.jit device function) called from translated code."""

    def __init__(self, fn, signatures=(), owner=None):
        self.fn = fn
        self.signatures = tuple(signatures)  # a device function's declared signatures
        # The dispatcher (a @cuda.jit kernel...) the function came from: told of each
        # specialization a call makes (``_nu_device_call``), as Numba records it there.
        self.owner = owner
        self.name = f"function {fn.__name__}"

    def _key(self):
        return self.fn

    def token(self) -> str:
        fn = self.fn
        if fn.__closure__:  # its behaviour depends on the cells: this object only
            return f"{fn.__module__}.{fn.__qualname__}@{id(fn):x}"
        code = fn.__code__
        return f"{fn.__module__}.{fn.__qualname__}:{hash((code.co_code, code.co_consts))}"


class BuiltinRef(Ref):
    def __init__(self, fname):
        self.fname = fname
        self.name = f"builtin {fname}"


class LibFuncRef(Ref):
    """A function of math, cmath or numpy (``lib`` is the module name)."""

    def __init__(self, lib, fname):
        self.lib = lib
        self.fname = fname
        self.name = f"{lib}.{fname}"


class TypeRef(Ref):
    """A scalar type used as a cast: np.float32(x), float32(x)."""

    def __init__(self, scalar):
        self.scalar = scalar
        self.name = f"type {scalar.name}"


class DtypeCallRef(Ref):
    """``np.dtype``, called in translated code: ``np.dtype("int32")`` is that type."""

    name = "numpy.dtype"


class UnsupportedDtypeRef(Ref):
    """A NumPy dtype translated code has no type for (``np.dtype("O")``, strings): an
    array of it cannot be made (its variable cannot be typed, in Numba's words)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.name = f"dtype {dtype!r}"


class LiteralRef(Ref):
    """An integer constant (or a tuple of them) passed where the callee needs a
    compile-time value (Numba's literal argument): ``helper(ary, 32)`` whose parameter
    sizes ``cuda.shared.array``. The callee is specialised per value and reads the
    parameter as that constant."""

    def __init__(self, value):
        self.value = value
        self.name = f"literal {value}"

    def _key(self):
        return ("literal", self.value)


class StringRef(Ref):
    """A string constant: a compile-time value, as Numba's string literals are in kernels.
    It can be compared (``mode == "fast"``, folded at compile time) and passed to device
    functions, which are specialised per value."""

    def __init__(self, value):
        self.value = value
        self.name = f"string {value!r}"

    def _key(self):
        return ("string", self.value)


class Val:
    """A C++ expression ``code`` of type ``type``; ``const`` is its Python value when known
    at compile time (literals, global constants)."""

    __slots__ = ("code", "const", "type")

    def __init__(self, code, type, const=None):
        self.code = code
        self.type = type
        self.const = const

    def __repr__(self):
        return f"Val({self.code!r}, {self.type})"
