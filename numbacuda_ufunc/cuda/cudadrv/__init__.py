"""Numba's ``numba.cuda.cudadrv`` namespace, for code that imports from it.

Numba users write ``from numba.cuda.cudadrv.driver import CudaAPIError`` or
``from numba.cuda.cudadrv.devicearray import DeviceNDArray``; after the rename these
modules give our classes under Numba's names. Numba's low-level driver bindings
(``cuMemcpyHtoD``...) are not here: the engine calls the driver from C++.
"""

from . import devicearray, devices, driver, error, nvrtc

__all__ = ["devicearray", "devices", "driver", "error", "nvrtc"]
