"""``numba.cuda.random``: xoroshiro128+ generators, one per thread, for kernels.

Numba's API and algorithm, bit for bit: ``create_xoroshiro128p_states(n, seed)`` seeds
generator 0 with SplitMix64 and places generator ``i`` 2**64 steps (one jump) after
generator ``i - 1``; kernels call ``xoroshiro128p_uniform_float32(states, i)`` and friends,
which src/kernels/nu_random.cuh implements.

The states are Numba's: a 1-d device array of ``xoroshiro128p_dtype`` records
``[('s0', uint64), ('s1', uint64)]``, 16 bytes per generator. Earlier versions used a
uint64 array of shape ``(n, 2)`` whose row ``i`` is ``(s0, s1)``, the same bytes; the
device functions and ``init_xoroshiro128p_states`` still take that form too.

Seeding runs on the host, then one copy to the device. Consecutive generators are
successive jumps, a sequential chain; instead of walking it we apply powers of the jump,
a linear map over GF(2)^128: J^(2^k) is kept as 16 byte-indexed tables, so applying it to
many states is 16 NumPy gathers, and the states double each round (1, 2, 4, ... n).
"""

from __future__ import annotations

import operator

import numpy as np

from ..compiler.intrinsics import Intrinsic
from ..types import from_dtype
from ._array_creation import as_cuda_array, is_cuda_array, to_device

__all__ = [
    "create_xoroshiro128p_states", "init_xoroshiro128p_states_cpu", "xoroshiro128p_dtype",
    "xoroshiro128p_type", "init_xoroshiro128p_states", "xoroshiro128p_jump",
    "xoroshiro128p_next", "xoroshiro128p_normal_float32", "xoroshiro128p_normal_float64",
    "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64",
]

# Device functions: the translator emits nu::kern::<name>(states, index) for each.
xoroshiro128p_next = Intrinsic("random.xoroshiro128p_next")
xoroshiro128p_jump = Intrinsic("random.xoroshiro128p_jump")
xoroshiro128p_uniform_float32 = Intrinsic("random.xoroshiro128p_uniform_float32")
xoroshiro128p_uniform_float64 = Intrinsic("random.xoroshiro128p_uniform_float64")
xoroshiro128p_normal_float32 = Intrinsic("random.xoroshiro128p_normal_float32")
xoroshiro128p_normal_float64 = Intrinsic("random.xoroshiro128p_normal_float64")

# Numba's state record: the generator's two words.
xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
xoroshiro128p_type = from_dtype(xoroshiro128p_dtype)  # for signatures: xoroshiro128p_type[:]

_MASK64 = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


def _splitmix64(seed: int) -> int:
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _rotl(x: np.ndarray, k: int) -> np.ndarray:
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


def _jump_rows(s: np.ndarray) -> np.ndarray:
    """Numba's jump, walked step by step, on every row of an (m, 2) uint64 array."""
    s0, s1 = s[:, 0].copy(), s[:, 1].copy()
    j0, j1 = np.zeros_like(s0), np.zeros_like(s1)
    for word in _JUMP:
        for b in range(64):
            if word >> b & 1:
                j0 ^= s0
                j1 ^= s1
            x = s1 ^ s0
            s0 = _rotl(s0, 55) ^ x ^ (x << np.uint64(14))
            s1 = _rotl(x, 36)
    return np.stack([j0, j1], axis=1)


def _tables(columns: np.ndarray) -> np.ndarray:
    """(16, 256, 2) tables of the linear map whose image of bit b is ``columns[b]``
    (bit b < 64 is bit b of s0, the others s1's): entry [p, v] is the image of byte
    value v placed at byte p of the 128-bit state."""
    cols = columns.reshape(16, 8, 2)
    t = np.zeros((16, 256, 2), np.uint64)
    for bit in range(8):
        step = 1 << bit
        t[:, step:2 * step] = t[:, :step] ^ cols[:, bit][:, None, :]
    return t


def _apply(tables: np.ndarray, s: np.ndarray) -> np.ndarray:
    out = np.zeros_like(s)
    for p in range(16):
        byte = (s[:, p // 8] >> np.uint64(8 * (p % 8))) & np.uint64(0xFF)
        out ^= tables[p][byte.astype(np.intp)]
    return out


_BASIS = np.zeros((128, 2), np.uint64)
_BASIS[np.arange(64), 0] = np.uint64(1) << np.arange(64, dtype=np.uint64)
_BASIS[np.arange(64, 128), 1] = np.uint64(1) << np.arange(64, dtype=np.uint64)
_jump_powers: list[np.ndarray] = []  # _jump_powers[k]: tables of J^(2^k), built on demand


def _jump_power(k: int) -> np.ndarray:
    while len(_jump_powers) <= k:
        if not _jump_powers:
            columns = _jump_rows(_BASIS)
        else:  # J^(2^(j+1)) e_b = J^(2^j) (J^(2^j) e_b)
            prev = _jump_powers[-1]
            columns = _apply(prev, _apply(prev, _BASIS))
        _jump_powers.append(_tables(columns))
    return _jump_powers[k]


def _host_states(n: int, seed: int, subsequence_start: int) -> np.ndarray:
    """The (n, 2) uint64 states Numba's init_xoroshiro128p_states_cpu computes."""
    states = np.empty((n, 2), np.uint64)
    if n == 0:
        return states
    z = _splitmix64(seed)
    first = np.array([[z, z]], np.uint64)
    for k in range(subsequence_start.bit_length()):
        if subsequence_start >> k & 1:
            first = _apply(_jump_power(k), first)
    states[0] = first[0]
    filled, k = 1, 0
    while filled < n:  # rows [filled, filled + m) are rows [0, m) advanced by 2**k jumps
        m = min(filled, n - filled)
        states[filled:filled + m] = _apply(_jump_power(k), states[:m])
        filled += m
        k += 1
    return states


def _uint64_arg(value, api: str, name: str, wrap: bool) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{api}(): {name} must be an integer (got {value!r})")
    v = operator.index(value)
    if wrap:  # Numba converts the seed with uint64(seed): negative seeds wrap
        return v & _MASK64
    if not 0 <= v <= _MASK64:
        raise ValueError(f"{api}(): {name} must be in [0, 2**64) (got {v})")
    return v


def _is_record_states(dtype, shape) -> bool:
    """Whether (dtype, shape) is a 1-d array of records laid out as xoroshiro128p_dtype."""
    fields = dtype.fields
    return (fields is not None and len(shape) == 1 and dtype.itemsize == 16
            and set(fields) == {"s0", "s1"}
            and fields["s0"][0] == np.uint64 and fields["s0"][1] == 0
            and fields["s1"][0] == np.uint64 and fields["s1"][1] == 8)


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Seed the generators in ``states``: a device array of ``xoroshiro128p_dtype``
    records (Numba's), or a uint64 device array of shape (n, 2).

    Generator ``i`` starts ``subsequence_start + i`` jumps of 2**64 steps after the
    SplitMix64 seeding of ``seed``, so no two threads overlap unless one draws more than
    2**64 numbers. The states are computed on the host and copied on ``stream``.
    """
    api = "init_xoroshiro128p_states"
    if not is_cuda_array(states) and not hasattr(states, "copy_to_host"):
        raise TypeError(f"{api}(): states must be a device array (got "
                        f"{type(states).__name__})")
    dev = states if hasattr(states, "copy_to_host") else as_cuda_array(states)
    dtype = np.dtype(dev.dtype)
    records = _is_record_states(dtype, dev.shape)
    if not records and (dtype != np.uint64 or len(dev.shape) != 2 or dev.shape[1] != 2):
        raise TypeError(f"{api}(): states must be a 1-d array of xoroshiro128p_dtype records "
                        f"or a uint64 array of shape (n, 2), one (s0, s1) per generator (got "
                        f"dtype {dev.dtype}, shape {dev.shape})")
    host = _host_states(dev.shape[0], _uint64_arg(seed, api, "seed", wrap=True),
                        _uint64_arg(subsequence_start, api, "subsequence_start", wrap=False))
    if records:
        host = host.view(dtype).reshape(dev.shape[0])
    to_device(host, stream=stream, to=dev)


def init_xoroshiro128p_states_cpu(states, seed, subsequence_start):
    """Numba's host seeding: fill the NumPy array ``states`` (xoroshiro128p_dtype records,
    or uint64 of shape (n, 2)) in place, as ``init_xoroshiro128p_states`` does on the
    device."""
    api = "init_xoroshiro128p_states_cpu"
    if not isinstance(states, np.ndarray):
        raise TypeError(f"{api}(): states must be a NumPy array (got {type(states).__name__})")
    records = _is_record_states(states.dtype, states.shape)
    if not records and (states.dtype != np.uint64 or states.ndim != 2 or states.shape[1] != 2):
        raise TypeError(f"{api}(): states must be a 1-d array of xoroshiro128p_dtype records "
                        f"or a uint64 array of shape (n, 2) (got dtype {states.dtype}, shape "
                        f"{states.shape})")
    host = _host_states(states.shape[0], _uint64_arg(seed, api, "seed", wrap=True),
                        _uint64_arg(subsequence_start, api, "subsequence_start", wrap=False))
    states[...] = host.view(states.dtype).reshape(states.shape) if records else host


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new device array of ``n`` seeded xoroshiro128+ generators, one
    ``xoroshiro128p_dtype`` record (s0, s1) each, as Numba's (see
    ``init_xoroshiro128p_states``)."""
    api = "create_xoroshiro128p_states"
    count = _uint64_arg(n, api, "n", wrap=False)
    host = _host_states(count, _uint64_arg(seed, api, "seed", wrap=True),
                        _uint64_arg(subsequence_start, api, "subsequence_start", wrap=False))
    return to_device(host.view(xoroshiro128p_dtype).reshape(count), stream=stream)
