"""Layer 3, the toolchain and caches: NVRTC and host-compiler builds through the C++ engine
(``_core``), the ``cuda.jit(cache=True)`` function cache, the CUDA pip wheels' paths, and
SASS inspection. Imports the translator (``compiler/``) and the settings, types and errors
below it; nothing here imports the ufunc, kernel, interop or ``cuda`` layers above."""
