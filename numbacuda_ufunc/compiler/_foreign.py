"""Foreign device functions: ``cuda.declare_device(name, sig)`` and calls to them.

Numba's ABI, followed exactly so that a Numba user's ``.cu`` files work unchanged: the
function ``name`` is ``extern "C" __device__ int name(ret_t* return_value, arg_t...)``; the
caller passes the address of a local for the result and ignores the int (Numba uses it for
exceptions, which foreign code does not raise). With ``abi="c"`` the function returns its
value directly: ``extern "C" __device__ ret_t name(arg_t...)``.

A call emits the prototype and a small inline wrapper ``nu_ffi_<name>`` once per
translation unit; arguments are cast to the declared types as Numba's typing does;
``CPointer`` parameters take an array and receive its data pointer.
"""

from __future__ import annotations

from ..types import Array, CPointer, Scalar, parse_signature_for
from ._linking import link_paths
from ._types import ctype
from ._values import Ref, Val

__all__ = ["ForeignFunction", "ForeignRef", "call", "declared_source"]


class ForeignFunction:
    """What ``cuda.declare_device`` returns: a device function implemented outside
    Python, callable from kernels and device functions."""

    _nu_foreign = True

    def __init__(self, name, sig, link=None, use_cooperative=False, abi="numba"):
        api = f"cuda.declare_device({name!r})"
        if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
            raise TypeError(f"cuda.declare_device(): name must be a C identifier (got "
                            f"{name!r})")
        if abi not in ("numba", "c"):
            raise NotImplementedError(f"{api}: unsupported ABI {abi!r} (expected 'numba' or "
                                      f"'c')")
        if isinstance(sig, tuple) or isinstance(sig, str) and sig.strip().startswith("("):
            raise TypeError(f"{api}: Return type must be provided for device declarations "
                            f"(got {sig!r})")
        s = parse_signature_for(api, sig)
        for i, t in enumerate(s.args):
            # Array types declare (Numba passes its array struct); a call with one is refused
            # (see call()), since only pointers cross into foreign code here.
            if not isinstance(t, (Scalar, CPointer, Array)):
                raise TypeError(f"{api}: argument {i + 1} has unsupported type {t}")
        if s.return_type is not None and not isinstance(s.return_type, (Scalar, CPointer)):
            raise TypeError(f"{api}: the return type must be a scalar or pointer type, or "
                            f"void (got {s.return_type})")
        self.name = name
        self.sig = s
        self.abi = abi
        self.link = link_paths(link, api)
        self.use_cooperative = bool(use_cooperative)
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        raise TypeError(f"foreign device function '{self.name}' can be called only from "
                        f"kernels and device functions")

    def __repr__(self):
        return f"<foreign device function {self.name} {self.sig}>"

    def prototype(self) -> str:
        params = [_param_ctype(t) for t in self.sig.args]
        rt = _param_ctype(self.sig.return_type) if self.sig.return_type is not None else "void"
        if self.abi == "c":
            return f'extern "C" __device__ {rt} {self.name}({", ".join(params)});'
        # Numba's ABI: the result through a pointer to a local (void: an unused int).
        out = f"{rt}*" if self.sig.return_type is not None else "int*"
        return f'extern "C" __device__ int {self.name}({", ".join([out] + params)});'

    def wrapper(self) -> str:
        """Declaration and the inline function calls use, guarded for shared units."""
        params = ", ".join(f"{_param_ctype(t)} a{i}" for i, t in enumerate(self.sig.args))
        args = [f"a{i}" for i in range(len(self.sig.args))]
        ret = self.sig.return_type
        rt = _param_ctype(ret) if ret is not None else "void"
        if self.abi == "c":
            body = f"return {self.name}({', '.join(args)});"
        elif ret is None:
            body = f"int r = 0; {self.name}({', '.join(['&r'] + args)});"
        else:
            body = f"{rt} r; {self.name}({', '.join(['&r'] + args)}); return r;"
        guard = f"NU_FOREIGN_{self.name}"
        return (f"#ifndef {guard}\n#define {guard}\n{self.prototype()}\n"
                f"static __device__ __forceinline__ {rt} nu_ffi_{self.name}({params}) "
                f"{{ {body} }}\n#endif")


def _param_ctype(t) -> str:
    """The C type of a parameter or result: ``T*``/``void*`` for a pointer (its value is
    a CPointer in translated code: indexed, given to carray, passed on)."""
    if isinstance(t, CPointer):
        return f"{ctype(t.dtype)}*" if t.dtype is not None else "void*"
    return ctype(t)


class ForeignRef(Ref):
    """A declared foreign function named in translated code."""

    def __init__(self, fn: ForeignFunction):
        self.fn = fn
        self.name = f"foreign function {fn.name}"

    def _key(self):
        return (self.fn.name, str(self.fn.sig), self.fn.abi)


def call(tr, node, fn: ForeignFunction, args, kwargs) -> Val:
    """A call of ``fn`` from translated code: checked, cast, and its wrapper recorded."""
    sig = fn.sig
    if kwargs:
        raise tr.error(node, f"foreign function '{fn.name}' takes no keyword arguments "
                             f"(got {', '.join(kwargs)})")
    if len(args) != len(sig.args):
        raise tr.error(node, f"foreign function '{fn.name}' takes {len(sig.args)} "
                             f"argument{'s' if len(sig.args) != 1 else ''} ({sig}) "
                             f"(got {len(args)})")
    codes = []
    for i, (v, t) in enumerate(zip(args, sig.args)):
        what = f"argument {i + 1} of foreign function '{fn.name}'"
        if isinstance(t, CPointer) and isinstance(v.type, CPointer):  # ffi.from_buffer(a)
            if t.dtype is not None and v.type.dtype is not None and v.type.dtype != t.dtype:
                raise tr.error(node, f"{what} is a pointer to {t.dtype.name} (got {v.type})")
            codes.append(f"reinterpret_cast<{_param_ctype(t)}>({v.code})")
            continue
        if isinstance(t, CPointer):
            if not isinstance(v.type, Array):
                raise tr.error(node, f"{what} is a pointer ({t}): pass an array (got "
                                     f"{getattr(v.type, 'name', v.type)})")
            if t.dtype is not None and v.type.dtype != t.dtype:
                raise tr.error(node, f"{what} is a pointer to {t.dtype.name}: pass an array "
                                     f"of {t.dtype.name} (got {v.type})")
            codes.append(f"reinterpret_cast<{_param_ctype(t)}>(({v.code}).data)")
            continue
        if isinstance(t, Array):
            raise tr.error(node, f"{what} is declared as an array ({t}): foreign functions "
                                 f"take arrays as pointers here; declare it "
                                 f"CPointer({t.dtype.name}) and pass the array")
        if isinstance(v.type, Array) or not tr._numeric(node, v, what):
            raise tr.error(node, f"{what} must be a {t.name} value (got "
                                 f"{getattr(v.type, 'name', v.type)})")
        codes.append(tr.cast(node, v, t))
    ctx = tr.ctx
    seen = ctx.foreign.get(fn.name)
    if seen is not None and (str(seen.sig), seen.abi) != (str(sig), fn.abi):
        raise tr.error(node, f"foreign function '{fn.name}' is declared twice with different "
                             f"signatures ({seen.sig} and {sig}); one C symbol has one "
                             f"signature")
    ctx.foreign[fn.name] = fn
    for path in fn.link:
        ctx.links[path] = None
    if fn.use_cooperative:
        ctx.grid_sync = True
    return Val(f"nu_ffi_{fn.name}({', '.join(codes)})", sig.return_type)


def declared_source(ctx) -> str:
    """The declarations and wrappers of every foreign function the unit calls."""
    return "".join(fn.wrapper() + "\n" for fn in ctx.foreign.values())

