"""The translator: Python scalar functions -> typed CUDA C++ ``__device__`` functions.

Pure Python; never imports the C++ engine. See :func:`translate`.
"""

from .translate import HEADER, TranslatedFunction, TranslatedKernel, translate, translate_kernel

__all__ = ["HEADER", "TranslatedFunction", "TranslatedKernel", "translate", "translate_kernel"]
