"""Calls to builtins, math, cmath and numpy functions: typing and C++ emission.

Every handler takes the translator, the call node and the argument values, and returns a
Val. Types follow Numba's rule for math/cmath (float32 in, float32 out: the GPU must not
silently compute float32 code in double precision) and NumPy's own typing for numpy
functions (asked of NumPy with sample values).
"""

from __future__ import annotations

import ast
import builtins
import cmath
import math
import operator

import numpy as np

from ..types import Type, bool_, complex128, float64, from_dtype
from ._exceptions import static_value
from ._types import (
    BOTTOM,
    WEAK_BOOL,
    WEAK_COMPLEX,
    WEAK_FLOAT,
    WEAK_INT,
    Bottom,
    TupleType,
    Weak,
    call_result,
    complex_of,
    ctype,
    float_of,
    is_array,
    is_complex,
    is_float,
    is_int_like,
    strong,
    unify,
)
from ._values import BuiltinRef, DtypeCallRef, LibFuncRef, TypeRef, Val, const_val

__all__ = ["SUPPORTED_BUILTINS", "UFUNC_NIN", "call_library", "isinstance_call", "lookup_attribute",
           "lookup_global_function"]

# math functions of one float argument: Python name -> nu:: overload set
_MATH1 = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh",
    "atanh": "atanh", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "cbrt": "cbrt", "fabs": "fabs",
    "erf": "erf", "erfc": "erfc", "gamma": "tgamma", "lgamma": "lgamma",
    "radians": "radians", "degrees": "degrees",
}
_MATH2 = {"atan2": "atan2", "pow": "pow", "hypot": "hypot", "fmod": "fmod",
          "copysign": "copysign", "nextafter": "nextafter", "remainder": "remainder"}
_MATH_OTHER = {"log", "floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "ldexp",
               "frexp", "modf"}
_MATH_CONST = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan}

_CMATH1 = {n: n for n in ("sqrt", "exp", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
                          "sinh", "cosh", "tanh", "asinh", "acosh", "atanh")}
_CMATH_OTHER = {"log", "phase", "polar", "rect", "isnan", "isinf", "isfinite"}
_CMATH_CONST = {"pi": cmath.pi, "e": cmath.e, "tau": cmath.tau, "inf": cmath.inf,
                "nan": cmath.nan, "infj": cmath.infj, "nanj": cmath.nanj}

# numpy unary functions computed in their result type: numpy name -> nu:: name
_NP1 = {
    "sqrt": "sqrt", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log",
    "log2": "log2", "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos",
    "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh",
    "arctanh": "atanh", "cbrt": "cbrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
    "rint": "rint", "fabs": "fabs", "deg2rad": "radians", "rad2deg": "degrees",
    "radians": "radians", "degrees": "degrees", "sign": "sign",
}
_NP1_COMPLEX_OK = {"sqrt", "exp", "log", "log10", "log2", "sin", "cos", "tan", "arcsin", "arccos",
                   "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"}
_NP2 = {"arctan2": "atan2", "hypot": "hypot", "copysign": "copysign",
        "nextafter": "nextafter", "fmod": "fmod", "fmax": "fmax", "fmin": "fmin",
        "maximum": "np_maximum", "minimum": "np_minimum"}
_NP_OPS = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/", "divide": "/",
           "floor_divide": "//", "remainder": "%", "mod": "%", "power": "**",
           "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "left_shift": "<<",
           "right_shift": ">>"}
_NP_CMP = {"equal": ("==", "eq"), "not_equal": ("!=", "ne"), "less": ("<", "lt"),
           "less_equal": ("<=", "le"), "greater": (">", "gt"), "greater_equal": (">=", "ge")}
_NP_LOGICAL = {"logical_and", "logical_or", "logical_xor"}
_NP_NOT = {"logical_not", "invert", "bitwise_not"}
_NP_OTHER = {"abs", "absolute", "negative", "positive", "square", "isnan", "isinf",
             "isfinite", "signbit", "real", "imag", "conj", "conjugate", "reciprocal"}
_NP_CONST = {"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan,
             "euler_gamma": np.euler_gamma}

# NumPy ufuncs among them, by number of inputs: callable on whole arrays with an output
# array inside kernels (np.sin(x, out)), as Numba allows.
_NP_UNARY = set(_NP1) | _NP_OTHER | _NP_NOT
_NP_BINARY = set(_NP2) | set(_NP_OPS) | set(_NP_CMP) | _NP_LOGICAL
UFUNC_NIN = {**{n: 1 for n in _NP_UNARY if isinstance(getattr(np, n, None), np.ufunc)},
             **{n: 2 for n in _NP_BINARY if isinstance(getattr(np, n, None), np.ufunc)}}

# The operator module's functions (operator.add...), called directly or passed around as
# values (Numba's tests do `op(a[i], b[i])` with op = operator.add): the same typing and
# code as the operator they name. In-place forms compute the value (scalars are immutable).
_OPERATOR_BIN = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
                 "mod": "%", "pow": "**", "and_": "&", "or_": "|", "xor": "^",
                 "lshift": "<<", "rshift": ">>"}
_OPERATOR_BIN.update({"i" + k.rstrip("_"): v for k, v in list(_OPERATOR_BIN.items())})
_OPERATOR_CMP = {"lt": ("<", "lt"), "le": ("<=", "le"), "gt": (">", "gt"), "ge": (">=", "ge"),
                 "eq": ("==", "eq"), "ne": ("!=", "ne")}
_OPERATOR_UNARY = {"neg": ast.USub, "pos": ast.UAdd, "invert": ast.Invert, "inv": ast.Invert,
                   "not_": ast.Not}
_OPERATOR_OTHER = {"abs", "truth"}

SUPPORTED_BUILTINS = ("abs", "min", "max", "round", "int", "float", "bool", "complex", "pow",
                      "divmod", "len", "range", "tuple")

_BUILTIN_TYPES = {"int": WEAK_INT, "float": WEAK_FLOAT, "bool": WEAK_BOOL,
                  "complex": WEAK_COMPLEX}


def _lib_names(lib):
    if lib == "operator":
        return set(_OPERATOR_BIN) | set(_OPERATOR_CMP) | set(_OPERATOR_UNARY) | _OPERATOR_OTHER
    if lib == "math":
        return set(_MATH1) | set(_MATH2) | _MATH_OTHER
    if lib == "cmath":
        return set(_CMATH1) | _CMATH_OTHER
    return _NP_UNARY | _NP_BINARY


def lookup_attribute(module, attr):
    """``module.attr`` for math, cmath and numpy: a Val (constant), a LibFuncRef, a TypeRef,
    or None when unsupported."""
    lib = module.__name__
    consts = {"math": _MATH_CONST, "cmath": _CMATH_CONST, "numpy": _NP_CONST,
              "operator": {}}.get(lib)
    if consts is None:
        return None
    if attr in consts:
        return const_val(consts[attr])
    if attr in _lib_names(lib) and hasattr(module, attr):
        return LibFuncRef(lib, attr)
    if lib == "numpy" and attr == "dtype":
        return DtypeCallRef()
    if lib == "numpy":
        obj = getattr(module, attr, None)
        if isinstance(obj, type) and issubclass(obj, np.generic):
            try:
                return TypeRef(from_dtype(obj))
            except TypeError:
                return None
    return None


def _reverse_table():
    table = {}
    for lib, mod in (("math", math), ("cmath", cmath), ("numpy", np), ("operator", operator)):
        for name in _lib_names(lib):
            obj = getattr(mod, name, None)
            if obj is not None:
                table.setdefault(id(obj), (obj, LibFuncRef(lib, name)))
    for name in SUPPORTED_BUILTINS:
        obj = getattr(builtins, name)
        table[id(obj)] = (obj, BuiltinRef(name))
    return table


_REVERSE = None


def lookup_global_function(obj):
    """A function object imported by name (``from math import sin``) -> its Ref, or None."""
    global _REVERSE
    if _REVERSE is None:
        _REVERSE = _reverse_table()
    hit = _REVERSE.get(id(obj))
    return hit[1] if hit is not None and hit[0] is obj else None


# ---- isinstance ----------------------------------------------------------------------------

def isinstance_call(tr, node) -> Val:
    """``isinstance(x, cls)`` with ``cls`` a class or a tuple of classes known at compile
    time: decided at compile time from ``x``'s type, as Python decides it for the value the
    function sees when it runs as Python (an int64 element is ``np.int64``, not ``int``; a
    float64 one is ``np.float64``, a subclass of ``float``; a Python number is
    ``int``/``float``/``complex``/``bool``). A type object of ours (``float32``) matches
    values of that type, as Numba's types do. The result is a constant, so a branch on it
    is pruned."""
    if len(node.args) != 2 or node.keywords:
        raise tr.error(node, "isinstance() takes exactly 2 positional arguments")
    v = tr.expr(node.args[0])
    if isinstance(v.type, Bottom):
        return Val("0", BOTTOM)
    spec = node.args[1]
    items = spec.elts if isinstance(spec, ast.Tuple) else [spec]
    what = "isinstance() needs a class or a tuple of classes"
    classes = [static_value(tr, item, what) for item in items]
    if len(classes) == 1 and isinstance(classes[0], tuple):
        classes = list(classes[0])
    pycls = _python_class(v.type)
    result = False
    for c in classes:
        if isinstance(c, Type):
            result |= v.type == c
        elif isinstance(c, type):
            result |= pycls is not None and issubclass(pycls, c)
        else:
            raise tr.error(node, f"{what} (got {c!r})")
    return const_val(bool(result))


def _python_class(t):
    """The class of the Python object a value of type ``t`` is when the function runs as
    Python on NumPy data."""
    if isinstance(t, Weak):
        return {"b": bool, "i": int, "f": float, "c": complex}[t.kind]
    if isinstance(t, TupleType):
        return tuple
    if is_array(t):
        return np.ndarray
    if t is None:
        return type(None)
    cls = getattr(t, "cls", None)  # an Enum member
    if isinstance(cls, type):
        return cls
    dtype = getattr(t, "dtype", None)
    return dtype.type if isinstance(dtype, np.dtype) else None


# ---- dispatch ------------------------------------------------------------------------------

def call_library(tr, node, ref, args, kwargs):
    """Translate a call to a builtin or a math/cmath/numpy function."""
    if isinstance(ref, BuiltinRef):
        fname, handler = f"{ref.fname}()", _BUILTIN_HANDLERS.get(ref.fname)
    else:
        fname = f"{'np' if ref.lib == 'numpy' else ref.lib}.{ref.fname}()"
        handler = {"math": _math_call, "cmath": _cmath_call, "numpy": _numpy_call,
                   "operator": _operator_call}[ref.lib]
    if handler is None:
        raise tr.error(node, f"builtin '{ref.fname}' is not supported")
    allowed = {"round": {"ndigits"}}.get(getattr(ref, "fname", ""), set())
    if isinstance(ref, BuiltinRef) and set(kwargs) - allowed or not isinstance(ref, BuiltinRef) and kwargs:
        bad = min(set(kwargs) - allowed)
        raise tr.error(node, f"keyword argument '{bad}' of {fname} is not supported")
    for a in args:
        if not isinstance(a.type, (Weak, TupleType)) and not hasattr(a.type, "dtype"):
            raise tr.error(node, f"{fname} got an argument of unsupported type {a.type}")
    if isinstance(ref, BuiltinRef):
        return handler(tr, node, args, kwargs)
    return handler(tr, node, ref.fname, args)


def _arity(tr, node, fname, args, lo, hi=None):
    hi = lo if hi is None else hi
    if not lo <= len(args) <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise tr.error(node, f"{fname} takes {want} arguments (got {len(args)})")
    for a in args:
        if isinstance(a.type, TupleType):
            raise tr.error(node, f"{fname} does not accept a tuple argument")


def _call(name, *codes):
    return f"nu::{name}({', '.join(codes)})"


# ---- builtins ------------------------------------------------------------------------------

def _b_abs(tr, node, args, kwargs):
    _arity(tr, node, "abs()", args, 1)
    (a,) = args
    r = tr.promote(node, lambda: call_result(builtins.abs, a.type))
    if is_complex(a.type):
        return Val(_call("abs", a.code), r)
    return Val(f"nu::abs<{ctype(r)}>({tr.cast(node, a, r)})", r)


def _b_minmax(which):
    def handler(tr, node, args, kwargs):
        if len(args) < 2:
            raise tr.error(node, f"{which}() of a single iterable is not supported; pass two "
                                 f"or more numbers (got {len(args)} arguments)")
        _arity(tr, node, f"{which}()", args, 2, 64)
        r = args[0].type
        for a in args[1:]:
            r = tr.promote(node, lambda a=a, r=r: unify(r, a.type))
        code = tr.cast(node, args[0], r)
        for a in args[1:]:
            code = f"nu::py_{which}<{ctype(r)}>({code}, {tr.cast(node, a, r)})"
        return Val(code, r)
    return handler


def _b_round(tr, node, args, kwargs):
    if "ndigits" in kwargs:
        args = args + [kwargs["ndigits"]]
    _arity(tr, node, "round()", args, 1, 2)
    a = args[0]
    if is_complex(a.type):
        raise tr.error(node, f"round() of a complex number is not supported (got {a.type})")
    if len(args) == 1 or (args[1].const is None and args[1].type is None):
        if is_float(a.type):
            return Val(f"nu::cast<nu::i64>(nu::rint({a.code}))", WEAK_INT)
        return Val(tr.cast(node, a, WEAK_INT) if isinstance(a.type, Weak) else a.code,
                   WEAK_INT if isinstance(a.type, Weak) else a.type)
    nd = args[1]
    if not is_int_like(nd.type):
        raise tr.error(node, f"round(): ndigits must be an integer (got {nd.type})")
    if is_float(a.type):
        return Val(f"nu::round_digits({a.code}, {tr.cast(node, nd, WEAK_INT)})", a.type)
    if nd.const is not None and nd.const >= 0:
        return a
    raise tr.error(node, "round() of an integer with a negative or variable ndigits is not "
                         "supported")


def _b_convert(target):
    def handler(tr, node, args, kwargs):
        if target == "complex":
            _arity(tr, node, "complex()", args, 0, 2)
            if any(is_complex(a.type) for a in args[1:]) or (
                    len(args) == 2 and is_complex(args[0].type)):
                raise tr.error(node, "complex() with complex parts is not supported")
            if len(args) == 1 and is_complex(args[0].type):
                return Val(tr.cast(node, args[0], WEAK_COMPLEX), WEAK_COMPLEX)
            parts = [tr.cast(node, a, WEAK_FLOAT) for a in args] + ["0.0"] * (2 - len(args))
            return Val(f"nu::c128{{{parts[0]}, {parts[1]}}}", WEAK_COMPLEX)
        _arity(tr, node, f"{target}()", args, 1)
        a = args[0]
        if target == "bool":
            return Val(tr.truth(a), WEAK_BOOL)
        if is_complex(a.type):
            raise tr.error(node, f"{target}() of a complex number is not supported "
                                 f"(got {a.type}); use .real or abs()")
        return Val(tr.cast(node, a, _BUILTIN_TYPES[target]), _BUILTIN_TYPES[target])
    return handler


def _b_pow(tr, node, args, kwargs):
    if len(args) == 3:
        raise tr.error(node, "pow() with a modulus is not supported")
    _arity(tr, node, "pow()", args, 2)
    return tr.binop(node, "**", args[0], args[1])


def _b_divmod(tr, node, args, kwargs):
    _arity(tr, node, "divmod()", args, 2)
    a, b = args
    r = tr.promote(node, lambda: tr.op_type("//", a.type, b.type))
    if is_complex(r):
        raise tr.error(node, f"divmod() of complex numbers is not supported (got {r})")
    tt = TupleType((r, r))
    return Val(f"nu::divmod<{ctype(r)}>({tr.cast(node, a, r)}, {tr.cast(node, b, r)})", tt)


def _b_len(tr, node, args, kwargs):
    if len(args) != 1 or not isinstance(args[0].type, TupleType):
        raise tr.error(node, "len() is supported only on tuples")
    n = len(args[0].type.items)
    return Val(f"{n}LL", WEAK_INT, n)


def _b_tuple(tr, node, args, kwargs):
    """``tuple(t)`` of a tuple is ``t`` (Python copies it; values are immutable here), and
    ``tuple()`` the empty tuple."""
    if kwargs or len(args) > 1:
        raise tr.error(node, "tuple() takes at most one argument")
    if not args:
        return Val("nu::tuple0{}", TupleType(()), ())
    if not isinstance(args[0].type, TupleType):
        raise tr.error(node, f"tuple() is supported only on tuples (got "
                             f"{getattr(args[0].type, 'name', args[0].type)})")
    return args[0]


def _b_range(tr, node, args, kwargs):
    raise tr.error(node, "range() is supported only as the iterable of a for loop")


def _b_range_arg(tr, node, args, kwargs):
    """A range() argument of a loop lifted from bytecode (_bytecode.py): an integer, held
    as a Python int like the source front end's loop bounds."""
    (a,) = args
    if not (is_int_like(a.type) or is_float(a.type)):  # floats as Numba: to int64, truncated
        raise tr.error(node, f"range() arguments must be integers or floats (got {a.type})")
    const = int(a.const) if isinstance(a.const, float) and math.isfinite(a.const) else a.const
    return Val(tr.cast(node, a, WEAK_INT), WEAK_INT, const)


_BUILTIN_HANDLERS = {
    "abs": _b_abs, "min": _b_minmax("min"), "max": _b_minmax("max"), "round": _b_round,
    "int": _b_convert("int"), "float": _b_convert("float"), "bool": _b_convert("bool"),
    "complex": _b_convert("complex"), "pow": _b_pow, "divmod": _b_divmod, "len": _b_len,
    "range": _b_range, "tuple": _b_tuple, "__nu_range_arg": _b_range_arg,
}


# ---- math ----------------------------------------------------------------------------------

def _python_result(r):
    """The type of a math/cmath result computed in ``r``. Python's math and cmath return
    Python floats and complexes, which are weak beside NumPy values (NEP 50): a float64 or
    complex128 result is weak, so ``x32 * math.exp(y64)`` stays float32 as in Python.
    float32/complex64 results keep their type: those arguments compute in single precision
    (Numba's rule, CUDA's single-precision functions)."""
    if r == float64:
        return WEAK_FLOAT
    if r == complex128:
        return WEAK_COMPLEX
    return r


def _operator_call(tr, node, fname, args):
    if fname in _OPERATOR_UNARY or fname in _OPERATOR_OTHER:
        _arity(tr, node, f"operator.{fname}()", args, 1)
        if fname == "abs":
            return _b_abs(tr, node, args, {})
        if fname == "truth":
            return _BUILTIN_HANDLERS["bool"](tr, node, args, {})
        return tr.unaryop(node, _OPERATOR_UNARY[fname], args[0])
    _arity(tr, node, f"operator.{fname}()", args, 2)
    if fname in _OPERATOR_CMP:
        code, r = tr._compare2(node, _OPERATOR_CMP[fname], args[0], args[1])
        return Val(code, r)
    return tr.binop(node, _OPERATOR_BIN[fname], args[0], args[1])


def _math_call(tr, node, fname, args):
    api = f"math.{fname}()"
    for a in args:
        if is_complex(a.type):
            raise tr.error(node, f"{api} does not accept complex numbers (got {a.type}); "
                                 f"use cmath.{fname}()")
    if fname in _MATH1:
        _arity(tr, node, api, args, 1)
        r = float_of(args[0].type)
        return Val(_call(_MATH1[fname], tr.cast(node, args[0], r)), _python_result(r))
    if fname in _MATH2:
        _arity(tr, node, api, args, 2)
        r = float_of(args[0].type, args[1].type)
        return Val(_call(_MATH2[fname], *(tr.cast(node, a, r) for a in args)), _python_result(r))
    if fname == "log":
        _arity(tr, node, api, args, 1, 2)
        r = float_of(*(a.type for a in args))
        code = _call("log", tr.cast(node, args[0], r))
        if len(args) == 2:
            code = f"({code} / {_call('log', tr.cast(node, args[1], r))})"
        return Val(code, _python_result(r))
    if fname in ("floor", "ceil", "trunc"):
        _arity(tr, node, api, args, 1)
        a = args[0]
        if is_int_like(a.type):
            return Val(tr.cast(node, a, WEAK_INT), WEAK_INT)
        if getattr(a.type, "name", None) == "bfloat16":  # numba.cuda.bf16's overloads: bfloat16
            return Val(f"nu::bf16_ops::h{fname}({a.code})", a.type)
        return Val(f"nu::cast<nu::i64>({_call(fname, a.code)})", WEAK_INT)
    if fname in ("isnan", "isinf", "isfinite"):
        _arity(tr, node, api, args, 1)
        a = args[0]
        if is_int_like(a.type):
            return Val("true" if fname == "isfinite" else "false", WEAK_BOOL)
        return Val(_call(fname, a.code), WEAK_BOOL)
    if fname == "ldexp":
        _arity(tr, node, api, args, 2)
        if not is_int_like(args[1].type):
            raise tr.error(node, f"math.ldexp(): the exponent must be an integer "
                                 f"(got {args[1].type})")
        r = float_of(args[0].type)
        return Val(_call("ldexp", tr.cast(node, args[0], r), tr.cast(node, args[1], WEAK_INT)),
                   _python_result(r))
    if fname in ("frexp", "modf"):
        _arity(tr, node, api, args, 1)
        r = float_of(args[0].type)
        p = _python_result(r)
        tt = TupleType((p, WEAK_INT)) if fname == "frexp" else TupleType((p, p))
        return Val(_call(fname, tr.cast(node, args[0], r)), tt)
    raise tr.error(node, f"{api} is not supported")


# ---- cmath ---------------------------------------------------------------------------------

def _cmath_call(tr, node, fname, args):
    api = f"cmath.{fname}()"
    if fname in _CMATH1 or fname == "log":
        _arity(tr, node, api, args, 1, 2 if fname == "log" else 1)
        r = complex_of(*(a.type for a in args))
        # cmath.log(z, base) divides as Python does (nu::log(z, base))
        code = _call(_CMATH1.get(fname, "log"), *(tr.cast(node, a, r) for a in args))
        return Val(code, _python_result(r))
    if fname in ("phase", "polar"):
        _arity(tr, node, api, args, 1)
        r = complex_of(args[0].type)
        f = WEAK_FLOAT if isinstance(r, Weak) else from_dtype(strong(r).dtype.char.lower())
        f = _python_result(f)
        if fname == "phase":
            return Val(_call("phase", tr.cast(node, args[0], r)), f)
        return Val(_call("polar", tr.cast(node, args[0], r)), TupleType((f, f)))
    if fname == "rect":
        _arity(tr, node, api, args, 2)
        f = float_of(args[0].type, args[1].type)
        r = WEAK_COMPLEX if isinstance(f, Weak) else complex_of(f)
        return Val(_call("rect", *(tr.cast(node, a, f) for a in args)), _python_result(r))
    if fname in ("isnan", "isinf", "isfinite"):
        _arity(tr, node, api, args, 1)
        a = args[0]
        if is_int_like(a.type):
            return Val("true" if fname == "isfinite" else "false", WEAK_BOOL)
        return Val(_call(fname, a.code), WEAK_BOOL)
    raise tr.error(node, f"{api} is not supported")


# ---- numpy ---------------------------------------------------------------------------------

def _numpy_call(tr, node, fname, args):
    api = f"np.{fname}()"
    fn = getattr(np, fname)
    nargs = 2 if fname in _NP_BINARY else 1
    _arity(tr, node, api, args, nargs)
    r = tr.promote(node, lambda: call_result(fn, *(a.type for a in args)))
    if fname in _NP_CMP:  # NumPy's comparisons: Python's rules, a NumPy bool
        code, _ = tr._compare2(node, _NP_CMP[fname], args[0], args[1])
        return Val(code, bool_)
    if fname in _NP_LOGICAL or fname == "logical_not":
        for v in args:
            tr._numeric(node, v, api)
        t = [tr.truth(v) for v in args]
        code = {"logical_and": lambda: f"({t[0]} && {t[1]})",
                "logical_or": lambda: f"({t[0]} || {t[1]})",
                "logical_xor": lambda: f"(bool({t[0]}) != bool({t[1]}))",
                "logical_not": lambda: f"(!{t[0]})"}[fname]()
        return Val(code, bool_)
    if fname in ("invert", "bitwise_not"):  # integers and bools (~True is False)
        return Val(tr.cast(node, tr.unaryop(node, ast.Invert, args[0]), r), r)
    if fname in _NP_OPS:
        v = tr.binop(node, _NP_OPS[fname], *args, numpy_power=True)
        return Val(tr.cast(node, v, r), r)
    a = args[0]
    if fname in _NP1:
        if is_complex(r) and fname not in _NP1_COMPLEX_OK:
            raise tr.error(node, f"{api} of a complex number is not supported (got {a.type})")
        if is_int_like(r):  # floor/ceil/trunc/sign of integers keep the integer
            if fname == "sign":
                return Val(f"nu::sign<{ctype(r)}>({tr.cast(node, a, r)})", r)
            return Val(tr.cast(node, a, r), r)
        return Val(_call(_NP1[fname], tr.cast(node, a, r)), r)
    if fname in _NP2:
        if is_complex(r) and fname in ("maximum", "minimum", "fmax", "fmin"):
            # NumPy's lexicographic order with its NaN rules (src/kernels/nu_complex.cuh)
            codes = ", ".join(tr.cast(node, x, strong(r)) for x in args)
            return Val(f"nu::np_{fname}({codes})", strong(r))
        if is_complex(r):
            raise tr.error(node, f"{api} of complex numbers is not supported")
        if fname == "fmod" and not is_float(r):
            raise tr.error(node, f"np.fmod() of integers is not supported (got {r})")
        name = _NP2[fname]
        if not is_float(r) and fname in ("fmax", "fmin"):
            name = "np_maximum" if fname == "fmax" else "np_minimum"  # same without NaN
        elif not is_float(r) and not name.startswith("np_"):
            raise tr.error(node, f"{api} of integers is not supported (got {r})")
        code = (f"nu::{name}<{ctype(r)}>" if name.startswith("np_") else f"nu::{name}")
        return Val(f"{code}({', '.join(tr.cast(node, x, r) for x in args)})", r)
    if fname in ("abs", "absolute"):
        if is_complex(a.type):
            return Val(_call("abs", tr.cast(node, a, complex_of(a.type) if isinstance(a.type, Weak) else a.type)), r)
        return Val(f"nu::abs<{ctype(r)}>({tr.cast(node, a, r)})", r)
    if fname == "negative":
        return Val(f"nu::neg<{ctype(r)}>({tr.cast(node, a, r)})", r)
    if fname == "positive":
        return Val(tr.cast(node, a, r), r)
    if fname == "square":
        c = tr.cast(node, a, r)
        return Val(f"nu::mul<{ctype(r)}>({c}, {c})", r)
    if fname == "reciprocal":
        if not (is_float(r) or is_complex(r)):
            raise tr.error(node, f"np.reciprocal() of integers is not supported (got {r})")
        return Val(f"nu::truediv<{ctype(r)}>({ctype(r)}{{1}}, {tr.cast(node, a, r)})"
                   if is_float(r) else
                   f"({ctype(r)}{{1, 0}} / {tr.cast(node, a, r)})", r)
    if fname in ("isnan", "isinf", "isfinite", "signbit"):
        if is_int_like(a.type):
            return Val("true" if fname == "isfinite" else
                       (f"({a.code} < 0)" if fname == "signbit" else "false"), bool_)
        if fname == "signbit" and is_complex(a.type):
            raise tr.error(node, "np.signbit() of a complex number is not supported")
        return Val(_call(fname, a.code), bool_)
    if fname in ("real", "imag", "conj", "conjugate"):
        name = {"conjugate": "conj"}.get(fname, fname)
        src = a if not isinstance(a.type, Weak) else Val(tr.cast(node, a, strong(a.type)),
                                                          strong(a.type))
        return Val(tr.cast(node, Val(_call(name, src.code), _part_type(name, src.type)), r), r)
    raise tr.error(node, f"{api} is not supported")


def _part_type(name, t):
    if is_complex(t) and name in ("real", "imag"):
        return from_dtype("f4" if strong(t).name == "complex64" else "f8")
    return t
