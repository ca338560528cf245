"""The ufunc and gufunc that the NumPy-protocol tests (test_array_ufunc_protocol.py,
test_pydata_stack.py) run against NumPy's np.add and np.vecdot. Named nu_*: pandas and pint
choose behaviour by a ufunc's __name__."""

from numbacuda_ufunc import guvectorize, vectorize

TARGETS = ["cuda", "cpu"]


def nu_add(a, b):
    return a + b


def nu_vdot(a, b, out):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    out[0] = acc


def make_add(target):
    """Our add, for float64 and int64 (identity 0, as np.add)."""
    return vectorize(["float64(float64, float64)", "int64(int64, int64)"], identity=0,
                     target=target)(nu_add)


def make_vdot(target):
    """Our vecdot: the gufunc "(n),(n)->()"."""
    return guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()",
                       target=target)(nu_vdot)
