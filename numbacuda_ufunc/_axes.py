"""NumPy's rule for the ``axis`` of a one-axis ufunc method (``accumulate``,
``reduceat``): shared by the methods (ufuncs/_methods.py) and their lazy Dask forms
(interop/_dask.py)."""

from __future__ import annotations

import operator

import numpy as np


def _axis(axis, ndim, api):
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]  # NumPy takes a 1-tuple for these one-axis methods
    elif axis is None or isinstance(axis, tuple):
        raise ValueError(f"{api}(): the method takes a single axis, not multiple axes "
                         f"(got axis={axis!r})")
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{api}(): axis must be an integer (got {axis!r})") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{api}(): axis {axis} is out of bounds for array of "
                                      f"dimension {ndim}")
    return axis % ndim
