"""``numbacuda_ufunc.cuda.config`` (Numba's ``numba.cuda.core.config``): the settings
module itself, :mod:`numbacuda_ufunc.config`, under the name Numba programs import."""

import sys

from .. import config

sys.modules[__name__] = config
