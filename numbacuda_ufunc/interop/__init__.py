"""Layer 4, interop: what ufuncs and kernels hand to other libraries and take from them:
Dask arrays (``_dask``), CuPy results (``_cupy``), NumPy's override protocol (NEP 13,
``_protocol``) and pickling by reference (``_pickling``). Imports only the toolchain, compiler
and base layers; the ufunc and kernel objects call into it."""
