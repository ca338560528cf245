"""Numba's ``numba.cuda.cudadrv.error``: its exception names, bound to ours."""

from ...errors import CompileError, CudaError, CudaSupportError, LinkerError

__all__ = ["CCSupportError", "CudaDriverError", "CudaRuntimeError", "CudaSupportError", "LinkerError",
           "NvrtcCompilationError", "NvrtcError", "NvrtcSupportError"]

CudaDriverError = CudaError
CudaRuntimeError = CudaError
NvrtcError = CompileError
NvrtcCompilationError = CompileError
NvrtcSupportError = CudaSupportError
CCSupportError = CudaSupportError  # a compute capability NVRTC cannot target
