"""Calls in translated code: Python and device functions, library functions, intrinsics,
overloads and constructors, with their arguments bound to the callee's parameters
(FunctionTranslator's part for ast.Call)."""

from __future__ import annotations

import ast
import builtins
import inspect

from ..types import (
    EXACT,
    Record,
    Scalar,
    best_signatures,
    conversion_kind,
)
from . import _arrays as arrays
from . import _closures as closures
from . import _enums as enums
from . import _exceptions as exceptions
from . import _foreign as foreign
from . import _fp8 as fp8
from . import _kernel_api as kernel_api
from . import _overloads as overloads
from . import _pointers as pointers
from . import _reductions as reductions
from . import _tuples as tuples
from . import _vectors as vectors
from ._library import (
    UFUNC_NIN,
    call_library,
    isinstance_call,
)
from ._literal_args import literal_params
from ._source import load_source
from ._translator_operators import _binding
from ._types import (
    BOTTOM,
    WEAK_INT,
    Bottom,
    TupleType,
    Weak,
    ctype,
    is_array,
    is_int_like,
    is_numeric,
    kind_of,
    strong,
)
from ._values import (
    BuiltinRef,
    DtypeCallRef,
    LibFuncRef,
    LiteralRef,
    ModuleRef,
    PyFuncRef,
    Ref,
    TypeRef,
    Val,
    const_val,
)


class CallTranslation:
    """FunctionTranslator's call methods (``expr_Call`` and what it binds and calls)."""

    def expr_Call(self, e):
        # f(*g(x)): the starred tuple is computed once, bound to a name for the call.
        self.star_bindings.append([])
        try:
            v = self._call(e)
        finally:
            bindings = self.star_bindings.pop()
        if bindings and v.code and not isinstance(v.type, Bottom):
            binds = " ".join(_binding(name, b) for name, b in bindings)
            return Val(f"([&]() {{ {binds} return {v.code}; }}())", v.type, v.const)
        return v

    def _starred(self, node, v):
        if (isinstance(v.type, TupleType) and not isinstance(v.const, tuple)
                and not v.code.isidentifier()):
            name = self.temp("nu_star")
            self.star_bindings[-1].append((name, v))
            v = Val(name, v.type)
        return tuples.starred_items(self, node, v)

    def _call(self, e):
        if (isinstance(e.func, ast.Name) and e.func.id == "isinstance"
                and e.func.id not in self.locals
                and exceptions.static_value(self, e.func) is builtins.isinstance):
            return isinstance_call(self, e)
        if isinstance(e.func, ast.Attribute):  # @overload_method, before built-in methods
            r = overloads.try_method(self, e)
            if r is not None:
                return r
        r = reductions.try_call(self, e)  # np.sum(a), a.mean(), np.argmax(a)...
        if r is not None:
            return r
        if isinstance(e.func, ast.Attribute) and e.func.attr in ("reshape", "view", "copy"):
            base = self.expr(e.func.value)
            if is_array(base.type):
                return getattr(arrays, e.func.attr)(self, e, base)
        if isinstance(e.func, ast.Attribute):
            arrays.reject_method_call(self, e)
        if isinstance(e.func, ast.Attribute) and e.func.attr == "bit_count":
            base = self.expr(e.func.value)
            if not isinstance(base.type, (ModuleRef, kernel_api.NamespaceRef)):
                if e.args or e.keywords:
                    raise self.error(e, ".bit_count() takes no arguments")
                if not self._numeric(e, base, ".bit_count()"):
                    return Val("0", BOTTOM)
                if not is_int_like(base.type):
                    raise self.error(e, f".bit_count() needs an integer (got {base.type})")
                t = strong(base.type) if kind_of(base.type) != "b" else strong(WEAK_INT)
                return Val(f"nu::bit_count<{ctype(t)}>({self.cast(e, base, t)})", WEAK_INT)
        if isinstance(e.func, ast.Attribute) and e.func.attr == "conjugate":
            base = self.expr(e.func.value)
            if not isinstance(base.type, ModuleRef):
                if e.args or e.keywords:
                    raise self.error(e, ".conjugate() takes no arguments")
                if not self._numeric(e, base, ".conjugate()"):
                    return Val("0", BOTTOM)
                return Val(f"nu::conj({base.code})", base.type)
        if (isinstance(e.func, ast.Name) and e.func.id == "print" and e.func.id not in self.locals
                and self.fn.__globals__.get("print", builtins.print) is builtins.print):
            return kernel_api.print_call(self, e)
        folded = self._float_of_string(e)
        if folded is not None:
            return folded
        f = self.expr(e.func)
        if isinstance(f.type, BuiltinRef) and f.type.fname == "len":
            n = arrays.length(self, e)  # len(a), len(a.shape)
            if n is not None:
                return n
        # cuda.local.array(n, dtype="int32"): a dtype may be a string, as in Numba
        dtype_strings = (isinstance(f.type, kernel_api.IntrinsicRef)
                         and f.type.key in ("shared.array", "local.array"))

        def arg_value(a, dtype_ok=True):
            if dtype_strings and not dtype_ok:  # alignment="16": refused as Numba does
                return self.expr(a)
            if dtype_strings and isinstance(a, ast.Constant) and isinstance(a.value, str):
                return kernel_api.dtype_from_string(self, a, a.value)
            if dtype_strings and isinstance(a, ast.List):  # a list shape: refused there
                return Val("", kernel_api.ListValue(self.expr(x) for x in a.elts))
            v = self.expr(a)
            if dtype_strings and isinstance(a, ast.Tuple) and v.const is None \
                    and isinstance(v.type, TupleType):  # a shape not known: refused there
                return Val("", kernel_api.ListValue((self.expr(x) for x in a.elts), "tuple"))
            return v

        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):  # f(*t): the tuple's items
                args.extend(self._starred(a, self.expr(a.value)))
            else:
                args.append(arg_value(a, len(args) < 2))
        kwargs = {}
        for k in e.keywords:
            if k.arg is None:
                raise self.error(e, "unsupported construct '**kwargs in a call'")
            kwargs[k.arg] = arg_value(k.value, k.arg != "alignment")
        ref = f.type
        if any(isinstance(a.type, Bottom) for a in list(args) + list(kwargs.values())):
            return Val("0", BOTTOM)
        # f(g(x), h(x)): the arguments in Python's order (bound in expr_Call's wrapper)
        bound, ordered = self.in_order(list(args) + list(kwargs.values()))
        if bound:
            self.star_bindings[-1].extend(bound)
            args, kwargs = ordered[:len(args)], dict(zip(kwargs, ordered[len(args):]))
        if isinstance(ref, LibFuncRef) and ref.lib == "numpy" and ref.fname in UFUNC_NIN:
            def element(vals, ref=ref):
                return call_library(self, e, ref, vals, {})
            element.nin = UFUNC_NIN[ref.fname]
            v = arrays.ufunc_into(self, e, ref.fname, args, kwargs, element)
            if v is not None:
                return v
        if isinstance(ref, (BuiltinRef, LibFuncRef, TypeRef)):
            for a in list(args) + list(kwargs.values()):
                if is_array(a.type):
                    shown = (ref.scalar.name if isinstance(ref, TypeRef) else ref.fname
                             if isinstance(ref, BuiltinRef) else
                             f"{'np' if ref.lib == 'numpy' else ref.lib}.{ref.fname}")
                    raise self.error(e, f"{shown}() on a whole array is not supported "
                                        f"(got {a.type}); apply it to the elements")
        if isinstance(ref, pointers.PointerArrayRef):  # carray / farray
            return pointers.pointer_array(
                self, e, ref.order, args, kwargs,
                lambda v: kernel_api.dtype_arg(self, e, v, f"{ref.name}()"))
        if isinstance(ref, pointers.FfiRef) and ref.method == "from_buffer":
            return pointers.from_buffer(self, e, args, kwargs)
        if isinstance(ref, DtypeCallRef):  # np.dtype("int32")
            return kernel_api.dtype_call(self, e, args, kwargs)
        if isinstance(ref, (BuiltinRef, LibFuncRef)):
            return call_library(self, e, ref, args, kwargs)
        if isinstance(ref, TypeRef) and isinstance(ref.scalar, Record):
            raise self.error(e, f"a record dtype cannot be called to make a value (got "
                                f"{ref.scalar}); use it as the dtype of an array")
        if isinstance(ref, TypeRef):
            if kwargs or len(args) > 1:
                raise self.error(e, f"{ref.scalar.name}() takes one argument")
            if not args:
                return Val(self.cast(e, Val("0", WEAK_INT, 0), ref.scalar), ref.scalar)
            if not fp8.is_fp8_value(args[0].type):  # float32(fp8 value): CUDA's conversion
                self._numeric(e, args[0], f"{ref.scalar.name}()")
            return Val(self.cast(e, args[0], ref.scalar), ref.scalar)
        if isinstance(ref, closures.ClosureRef):
            extra = closures.hidden_values(self, e, ref)
            if any(isinstance(v.type, Bottom) for v in extra):
                return Val("0", BOTTOM)
            return self.call_function(e, ref.fn, args, kwargs, src=ref.src, hidden=extra)
        if isinstance(ref, PyFuncRef):
            if ref.signatures:  # cuda.jit("int32(int32)", device=True): cast to it
                return self.call_with_signature(e, ref, args, kwargs)
            return self.call_function(e, ref.fn, args, kwargs, owner=ref.owner)
        if isinstance(ref, foreign.ForeignRef):
            return foreign.call(self, e, ref.fn, args, kwargs)
        if isinstance(ref, overloads.OverloadRef):
            return overloads.call(self, e, ref, args, kwargs)
        if isinstance(ref, kernel_api.IntrinsicRef):
            return kernel_api.call(self, e, ref, args, kwargs)
        if isinstance(ref, tuples.NamedTupleRef):
            return tuples.make_namedtuple(self, e, ref, args, kwargs)
        if isinstance(ref, vectors.VectorCtorRef):
            return vectors.construct(self, e, ref, args, kwargs)
        if isinstance(ref, fp8.Fp8CtorRef):
            return fp8.construct(self, e, ref, args, kwargs)
        if isinstance(ref, enums.EnumClassRef):  # Numba types no call of an Enum class
            name = ref.cls.__name__
            raise self.error(e, f"calling the Enum class {name}() is not supported (nor in "
                                f"Numba): name a member ({name}.member or {name}['member']), "
                                f"pass members as arguments, or compare with their .value")
        raise self.error(e, f"{getattr(ref, 'name', ref)} is not callable")

    def _pack_varargs(self, node, fn, items):
        """The values a ``*args`` parameter receives, as one tuple argument."""
        for v in items:
            if isinstance(v.type, Ref):
                raise self.error(node, f"'{fn.__name__}' takes *args: its extra arguments "
                                       f"must be numbers, arrays or tuples (got {v.type.name})")
        tt = TupleType(v.type for v in items)
        const = tuple(v.const for v in items) if all(v.const is not None for v in items) \
            else None
        ct = self.promote(node, lambda: ctype(tt))
        return Val(f"{ct}{{{', '.join(v.code for v in items)}}}", tt, const)

    def call_with_signature(self, node, ref, args, kwargs):
        """A device function declared with signatures, as Numba's dispatchers call one
        whose compilation is fixed: of the signatures whose arity fits, whose arrays match
        and to which every number converts, the one Numba rates best (fewest unsafe, then
        safe conversions, then promotions; the first of a tie, as Numba resolves one);
        the arguments are cast to it, and the result to its return type."""
        fn = ref.fn
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(node, f"wrong arguments for '{fn.__name__}': {exc}") from None
        vals = list(bound.args)

        def conversions(sig):
            """The conversion kind of each argument, or None when one does not convert."""
            if len(sig.args) != len(vals):
                return None
            kinds = []
            for v, t in zip(vals, sig.args):
                if is_array(v.type) or is_array(t):
                    if not (is_array(v.type) and is_array(t) and v.type.ndim == t.ndim
                            and v.type.dtype == t.dtype):
                        return None
                    kinds.append(EXACT)
                elif not isinstance(t, Scalar) or not is_numeric(v.type):
                    return None
                elif strong(v.type) == t:
                    kinds.append(EXACT)
                else:  # numbers convert as in Numba's device calls, even unsafely
                    kinds.append(conversion_kind(strong(v.type).dtype, t.dtype))
                    if kinds[-1] is None:  # complex to a real type
                        return None
            return kinds

        candidates = [(s, k) for s in ref.signatures if (k := conversions(s)) is not None]
        best = best_signatures(candidates)
        if not best:
            got = ", ".join(getattr(v.type, "name", str(v.type)) for v in vals)
            shown = "; ".join(str(s) for s in ref.signatures)
            raise self.error(node, f"Invalid use of type(device function '{fn.__name__}') "
                                   f"with parameters ({got}): no signature matches; its "
                                   f"signatures are: {shown}")
        sig = best[0]
        cast = [v if is_array(t) else Val(self.cast(node, v, t), t)
                for v, t in zip(vals, sig.args)]
        r = self.call_function(node, fn, cast, {})
        if sig.return_type is None or isinstance(r.type, Bottom):
            return r
        return Val(self.cast(node, r, sig.return_type), sig.return_type)

    def call_function(self, node, fn, args, kwargs, src=None, hidden=(), owner=None):
        """A call of the Python function ``fn`` (specialised on the argument types);
        ``src`` and ``hidden`` are a nested function's source with hidden parameters, and
        the values for those (_closures.py); ``owner`` the dispatcher ``fn`` came from."""
        try:
            sig = inspect.signature(fn)
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(node, f"wrong arguments for '{fn.__name__}': {exc}") from None
        bound.apply_defaults()
        for pname, p in sig.parameters.items():
            if p.kind is inspect.Parameter.VAR_POSITIONAL:  # *args: one tuple argument
                bound.arguments[pname] = self._pack_varargs(node, fn, bound.arguments[pname])
        # Nested functions passed as arguments bring the locals they read along.
        forward, names, carried = closures.forwarding(self, node, bound.arguments.items())
        if names:
            src = closures.with_hidden(src or load_source(fn), names, forward)
            hidden = list(hidden) + carried
        if any(isinstance(v.type, Bottom) for v in hidden):
            return Val("0", BOTTOM)
        vals = []
        literals = frozenset()
        def weak_int(v):  # an int constant, or a tuple of them (a shape)
            if not isinstance(v, Val):
                return False
            if isinstance(v.const, tuple):
                return (isinstance(v.type, TupleType) and all(type(c) is int for c in v.const)
                        and all(isinstance(t, Weak) for t in v.type.items))
            return type(v.const) is int and isinstance(v.type, Weak)

        if any(weak_int(v) for v in bound.arguments.values()):
            literals = literal_params(src or load_source(fn))
        for pname, v in bound.arguments.items():
            if pname in literals and weak_int(v):
                vals.append(Val("", LiteralRef(v.const)))
                continue
            if not isinstance(v, Val):
                c = self.promote(node, lambda v=v: const_val(v))
                if c is None:
                    raise self.error(node, f"default value of parameter '{pname}' of "
                                           f"'{fn.__name__}' is not a number ({v!r})")
                v = c
            # A Ref (a dtype, a function, cuda.atomic.add...) is a compile-time argument:
            # the callee is specialised on it and it is not passed at run time.
            if not isinstance(v.type, (TupleType, Ref, Record, enums.EnumMember)) \
                    and not is_array(v.type) and not vectors.is_vector(v.type) \
                    and not fp8.is_fp8_value(v.type):
                self._numeric(node, v, f"argument '{pname}' of {fn.__name__}()")
            vals.append(v)
        vals.extend(hidden)
        types = tuple(v.type for v in vals)
        rec = self.ctx.function(fn, types, self, node, src=src)
        code = f"{rec.name}({', '.join(v.code for v in vals if not isinstance(v.type, Ref))})"
        rt = rec.return_type
        if isinstance(rt, Bottom):
            return Val("0", BOTTOM)
        note = getattr(owner, "_nu_device_call", None)
        if self.emitting and callable(note):  # final types: the dispatcher lists them
            final = tuple(strong(t) if isinstance(t, Weak) else t for t in types
                          if not isinstance(t, Ref))
            result = strong(rt) if isinstance(rt, Weak) else rt
            note(final, result)
            where = (getattr(fn, "__module__", None), getattr(fn, "__qualname__", ""))
            if where[0] and "<locals>" not in where[1]:
                self.ctx.device_calls.append((*where, final, result))
        return Val(code, rt)
