"""``numbacuda_ufunc.cuda.launchconfig`` (Numba's ``numba.cuda.launchconfig``): the module
:mod:`numbacuda_ufunc.kernels.launchconfig` itself, under the name Numba programs import."""

import sys

from ..kernels import launchconfig

sys.modules[__name__] = launchconfig
