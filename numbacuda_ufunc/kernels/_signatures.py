"""Kernel signatures: a ``cuda.jit`` signature checked for a kernel (``void`` result),
and argument type tuples compared and spelled as Numba's messages spell them."""

from __future__ import annotations

from ..types import (
    Array,
    Signature,
    parse_signature_for,
)


def _kernel_signature(sig, name) -> Signature:
    sig = parse_signature_for(f"cuda.jit({name!r})", sig)
    if sig.return_type is not None:
        raise TypeError(f"cuda.jit({name!r}): kernels return nothing; declare them "
                        f"void(...) (got {sig})")
    return sig

def _same_types(a, b) -> bool:
    def key(t):
        return (t.dtype.name, t.ndim) if isinstance(t, Array) else (t.name,)
    return len(a) == len(b) and all(key(x) == key(y) for x, y in zip(a, b))

def _sig_text(types) -> str:
    return "(" + ", ".join(t.name for t in types) + ")"
