"""The Python functions every benchmark compiles, shared by us and numba-cuda (the same
source goes through both translators), with the CuPy kernels that compute the same thing.

Kept in a module file: both translators read the function's source.
"""

import math

import numpy as np


def add2(x, y):
    return x + y


def add4(a, b, c, d):
    return a + b + c + d


def poly(x, y):
    # degree-5 polynomial in x (Horner), plus y: 10 flops per element
    return 1.5 + x * (2.0 + x * (-0.5 + x * (0.25 + x * (-0.125 + x * 0.0625)))) + y


def transc(x, y):
    return math.exp(-x * x) * math.sin(y)


def matmul_f32(a, b, out):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = np.float32(0.0)
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            out[i, j] = acc


def normalize_f32(x, out):
    total = np.float32(0.0)
    for i in range(x.shape[0]):
        total += x[i] * x[i]
    inv = np.float32(1.0) / math.sqrt(total)
    for i in range(x.shape[0]):
        out[i] = x[i] * inv


def sum_op(a, b):
    return a + b


def max_op(a, b):
    return a if a > b else b


# CuPy ElementwiseKernel bodies computing the same functions (one fused kernel each, the
# fastest way CuPy offers for a multi-operation expression). Python literals are doubles,
# so numba and we evaluate float32 poly in float64 and round once (NumPy's scalar rules
# under NEP 50 would keep float32; numba's typing promotes): the CuPy body mirrors that
# by writing the literals as doubles and casting the result.
CUPY_BODIES = {
    "add2": ("T x, T y", "T z", "z = x + y"),
    "add4": ("T a, T b, T c, T d", "T z", "z = a + b + c + d"),
    "poly": ("T x, T y", "T z",
             "z = (T)(1.5 + x * (2.0 + x * (-0.5 + x * (0.25 + x * (-0.125 + x * 0.0625))))"
             " + y)"),
    "transc": ("T x, T y", "T z", "z = exp(-x * x) * sin(y)"),
}


# @cuda.jit launch overhead (bench_launch.py): kernels that touch nothing, taking 0, 1, 4
# or 16 array arguments, compiled by each library from the same Python source.
def launch0():
    pass


def launch1(a0):
    pass


def launch4(a0, a1, a2, a3):
    pass


def launch16(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15):
    pass
