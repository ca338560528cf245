"""Edge cases of the NumPy ufunc surface found by an adversarial pass over vectorize,
guvectorize and their methods: each test is a defect that was fixed; NumPy's own ufunc
with the same arguments is the oracle."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda, guvectorize, vectorize

TARGETS = ["cuda", "cpu", "parallel"]


def add_fn(a, b):
    return a + b


ADD_TYPES = ["int64(int64, int64)", "uint64(uint64, uint64)", "float32(float32, float32)",
             "float64(float64, float64)", "complex128(complex128, complex128)"]
ADD = {t: vectorize(ADD_TYPES, target=t, identity=0)(add_fn) for t in TARGETS}


def host(x):
    return x.copy_to_host() if isinstance(x, cuda.DeviceNDArray) else x


# ---- accumulate and reduceat with an out= that overlaps the input


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("view", ["reversed", "shifted", "same"])
def test_accumulate_out_overlapping_input(target, view):
    def run(f, x):
        out = {"reversed": x[::-1], "shifted": x[1:], "same": x}[view]
        src = x[:-1] if view == "shifted" else x
        f.accumulate(src, out=out)
        return x
    got = run(ADD[target], np.arange(1.0, 9.0))
    np.testing.assert_array_equal(got, run(np.add, np.arange(1.0, 9.0)))


@pytest.mark.parametrize("target", TARGETS)
def test_accumulate_out_overlapping_input_2d(target):
    def run(f):
        y = np.arange(12.0).reshape(3, 4)
        f.accumulate(y, axis=1, out=y[:, ::-1])
        return y
    np.testing.assert_array_equal(run(ADD[target]), run(np.add))


def test_accumulate_device_out_overlapping_input():
    d = cuda.to_device(np.arange(1.0, 9.0))
    ADD["cuda"].accumulate(d, out=d[::-1])
    x = np.arange(1.0, 9.0)
    np.add.accumulate(x, out=x[::-1])
    np.testing.assert_array_equal(d.copy_to_host(), x)


@pytest.mark.parametrize("target", TARGETS)
def test_reduceat_out_overlapping_input(target):
    def run(f):
        x = np.arange(1.0, 9.0)
        f.reduceat(x, [0, 4, 6, 7, 1, 2, 3, 5], out=x)
        return x
    np.testing.assert_array_equal(run(ADD[target]), run(np.add))
