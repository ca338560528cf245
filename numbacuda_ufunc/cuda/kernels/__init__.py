"""Ready-made kernels of Numba's ``numba.cuda.kernels`` (``transpose``)."""

from . import transpose

__all__ = ["transpose"]
