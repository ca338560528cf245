"""help() of a ufunc, gufunc, reducer and kernel lists its call signature and keywords,
as help() of a NumPy ufunc does, with the decorated function's docstring kept."""

import pydoc

import numpy as np

from numbacuda_ufunc import cuda, guvectorize, reduce, vectorize


def _help_text(obj):
    return pydoc.render_doc(obj, renderer=pydoc.plaintext)


def test_help_ufunc_lists_call_and_keywords():
    @vectorize(["float64(float64, float64)"])
    def hypot2(a, b):
        """Squared hypotenuse."""
        return a * a + b * b

    text = _help_text(hypot2)
    assert ("hypot2(a, b, /, out=None, *, where=True, casting='same_kind', order='K', "
            "dtype=None, subok=True, signature=None, stream=0)") in text
    assert "Squared hypotenuse." in text
    for word in ("Parameters", "where :", "casting :", "stream :", "Returns", "reduce(", "accumulate("):
        assert word in text, word
    assert hypot2.py_func.__doc__ == "Squared hypotenuse."
    assert hypot2(np.float64(3), np.float64(4)) == 25.0


def test_help_numpy_ufunc_keeps_the_users_docstring():
    @vectorize(["float64(float64)"], target="cpu")
    def twice(x):
        """Doubles."""
        return 2 * x

    # NumPy writes its own signature line before the docstring it is given
    assert twice.ufunc.__doc__.rstrip().endswith("Doubles.")
    assert twice.ufunc.__doc__.count("Parameters") == 0


def test_help_lazy_ufunc_without_docstring():
    @vectorize
    def plus(a, b):
        return a + b

    text = _help_text(plus)
    assert "plus(a, b, /, out=None" in text and "Parameters" in text


def test_help_gufunc_lists_call_and_keywords():
    @guvectorize(["void(float64[:], float64[:])"], "(n)->()")
    def total(x, res):
        """Sum of a row."""
        s = 0.0
        for v in x:
            s += v
        res[0] = s

    text = _help_text(total)
    assert "total(x, /, res=None, *, out=None, axes=None, axis=None, keepdims=False" in text
    assert "(n)->()" in text and "Sum of a row." in text
    for word in ("Parameters", "axes :", "keepdims :", "stream :", "Returns"):
        assert word in text, word


def test_help_reduce_lists_call_and_keywords():
    @reduce
    def biggest(a, b):
        """The larger one."""
        return a if a > b else b

    text = _help_text(biggest)
    assert "biggest(arr, size=None, res=None, init=0, stream=0, axis=None)" in text
    for word in ("The larger one.", "Parameters", "init :", "axis :", "Returns"):
        assert word in text, word
    assert biggest(np.array([3.0, 7.0, 5.0])) == 7.0


def test_help_kernel_lists_launch_and_arguments():
    @cuda.jit
    def fill(arr, value):
        """Fills arr."""
        i = cuda.grid(1)
        if i < arr.size:
            arr[i] = value

    text = _help_text(fill)
    assert "fill[griddim, blockdim, stream=0, sharedmem=0](arr, value)" in text
    for word in ("Fills arr.", "griddim :", "blockdim :", "sharedmem :", "forall("):
        assert word in text, word
    a = np.zeros(4)
    fill[1, 4](a, 2.0)
    assert a.tolist() == [2.0] * 4
