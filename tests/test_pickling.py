"""Pickling kernels, configured launches, ufuncs, gufuncs and reducers, as Numba pickles its
dispatchers: module globals by name, local and exec-made functions by value (cloudpickle).
The rebuilt object must compute what the original computed, in this process and in a
fresh one."""

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

from numbacuda_ufunc import cuda, guvectorize, reduce, vectorize


def _roundtrip(obj, times=2):
    for _ in range(times):
        obj = pickle.loads(pickle.dumps(obj))
    return obj


@cuda.jit(device=True)
def _plus_one(a):
    return a + 1


@cuda.jit
def global_kernel(arr):
    arr[0] = _plus_one(arr[0]) * 3


def test_global_kernel_pickles_by_name():
    assert pickle.loads(pickle.dumps(global_kernel)) is global_kernel


@pytest.mark.parametrize("eager", [False, True])
def test_local_kernel_with_device_function_pickles_by_value(eager):
    @cuda.jit(device=True)
    def inner(a):
        return a * 2 + 1

    def body(arr):
        i = cuda.grid(1)
        if i < arr.size:
            arr[i] = inner(arr[i])

    kernel = cuda.jit("void(int64[:])")(body) if eager else cuda.jit(body)
    arr = np.arange(5, dtype=np.int64)
    want = arr.copy()
    kernel[1, 8](want)
    clone = _roundtrip(kernel)
    assert clone is not kernel and clone.__name__ == "body"
    got = arr.copy()
    clone[1, 8](got)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, arr * 2 + 1)
    if eager:  # the eager signature travels: the clone is compiled at unpickling
        assert len(clone.overloads) == 1


def test_configured_launch_keeps_its_shape():
    @cuda.jit
    def fill(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = i

    launch = _roundtrip(fill[5, 8])
    assert launch.griddim == (5, 1, 1) and launch.blockdim == (8, 1, 1)
    out = np.zeros(40, np.int32)
    launch(out)
    np.testing.assert_array_equal(out, np.arange(40))
    shaped = _roundtrip(fill[(2, 3), (4, 2), 0, 64])
    assert (shaped.griddim, shaped.blockdim, shaped.sharedmem) == ((2, 3, 1), (4, 2, 1), 64)
    everywhere = _roundtrip(fill.forall(17))
    out = np.zeros(17, np.int32)
    everywhere(out)
    np.testing.assert_array_equal(out, np.arange(17))


def test_launch_on_a_stream_refuses_to_pickle():
    @cuda.jit
    def noop(a):
        pass

    with pytest.raises(pickle.PicklingError, match="kernel 'noop'.*stream"):
        pickle.dumps(noop[1, 1, cuda.stream()])


def test_local_ufunc_gufunc_and_reducer_pickle_by_value():
    @vectorize(["int64(int64)", "float64(float64)"], target="cuda")
    def twice(x):
        return x * 2

    @guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()", target="cuda")
    def dot(a, b, out):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        out[0] = s

    @reduce
    def biggest(a, b):
        return max(a, b)

    x = np.arange(10, dtype=np.int64)
    y = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    for f in (twice, _roundtrip(twice)):
        np.testing.assert_array_equal(f(x), x * 2)
        np.testing.assert_array_equal(f(y), y * 2)
    np.testing.assert_allclose(_roundtrip(dot)(y, y), (y * y).sum(axis=1))
    assert _roundtrip(biggest)(np.array([3.0, -1.0, 7.5, 2.0])) == 7.5
    square = _roundtrip(vectorize(["float32(float32)"], target="cuda")(lambda v: v * v))
    np.testing.assert_array_equal(square(np.float32([1.5, -2.0])), np.float32([2.25, 4.0]))


def test_kernel_made_by_exec_pickles_by_value():
    namespace = {"cuda": cuda}
    exec("def made(a):\n    a[0] = a[0] - 7\n", namespace)  # no source: the bytecode front end
    clone = _roundtrip(cuda.jit(namespace["made"]))
    a = np.array([10], np.int64)
    clone[1, 1](a)
    assert a[0] == 3


_CHILD = """
import json, pickle, sys
import numpy as np
kernel, ufunc = pickle.loads(sys.stdin.buffer.read())
a = np.arange(6, dtype=np.float64)
kernel[1, 8](a)
print(json.dumps([a.tolist(), ufunc(np.float64([1.0, 2.5])).tolist()]))
"""


def test_pickles_rebuild_in_a_fresh_process():
    @cuda.jit
    def negate(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = -a[i] + 0.5

    @vectorize(["float64(float64)"], target="cuda")
    def cube(v):
        return v * v * v

    out = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps((negate, cube)),
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    got = json.loads(out.stdout.decode().strip().splitlines()[-1])
    assert got == [[0.5, -0.5, -1.5, -2.5, -3.5, -4.5], [1.0, 15.625]]


def test_pre_launch_callbacks_run_before_each_launch_and_block_pickling():
    @cuda.jit
    def bump(a):
        a[0] += 1

    seen = []
    launch = bump[1, 1]
    assert launch.pre_launch_callbacks == []
    launch.pre_launch_callbacks.append(
        lambda kernel, config: seen.append((kernel, config.griddim, int(a[0]))))
    a = np.zeros(1, np.int64)
    launch(a)
    launch(a)
    assert a[0] == 2
    assert seen == [(bump, (1, 1, 1), 0), (bump, (1, 1, 1), 1)]  # each before its launch
    with pytest.raises(pickle.PicklingError, match="pre-launch callbacks"):
        pickle.dumps(launch)
    assert bump[1, 1].pre_launch_callbacks == []  # each configuration has its own list
