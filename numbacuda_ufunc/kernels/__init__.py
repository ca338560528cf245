"""Layer 5, kernels: ``cuda.jit`` kernels (:class:`kernel.Kernel`, the decorator in
``jit.py``), device functions and Numba's ``launchconfig``. Independent of ``ufuncs/``
(neither imports the other); both sit on interop, toolchain, compiler and the base layer."""
