"""Layer 5, ufuncs: ``vectorize`` (:class:`ufunc.UFunc`), ``guvectorize``, ``reduce``, the
ufunc methods (reduce, accumulate, reduceat, outer, at) and NumPy's call keywords.
Independent of ``kernels/`` (neither imports the other); both sit on interop, toolchain,
compiler and the base layer."""
