"""What ``help()`` shows for a ``cuda.jit`` kernel: the launch, the kernel's own
arguments and the methods, in numpydoc sections, with the function's docstring between
(still ``kernel.py_func.__doc__``). ufuncs/_help.py does the same for ufuncs."""

from __future__ import annotations

import inspect
import textwrap

__all__ = ["kernel_doc"]


def _assemble(call: str, summary: str, user_doc: str | None, sections: str) -> str:
    parts = [call, "", summary]
    if user_doc and user_doc.strip():
        parts += ["", inspect.cleandoc(user_doc)]
    parts += ["", sections]
    return "\n".join(parts)


def kernel_doc(name: str, pyfunc) -> str:
    """``__doc__`` of a ``cuda.jit`` kernel."""
    try:
        params = str(inspect.signature(pyfunc))
    except (TypeError, ValueError):
        params = "(*args)"
    call = f"{name}[griddim, blockdim, stream=0, sharedmem=0]{params}"
    summary = (f"A CUDA kernel made by ``cuda.jit``: launch it over a grid with "
               f"``{name}[griddim, blockdim](...)``.")
    sections = textwrap.dedent("""\
        Parameters
        ----------
        griddim : int or tuple of int
            Blocks in the grid (1, 2 or 3 dimensions).
        blockdim : int or tuple of int
            Threads per block (1, 2 or 3 dimensions).
        stream : Stream or int, optional
            The CUDA stream of the launch (default 0).
        sharedmem : int, optional
            Bytes of dynamic shared memory per block (``cuda.shared.array(0, dtype)``).

        The kernel's own arguments follow in the call: NumPy arrays (copied to the device
        and back), device and ``__cuda_array_interface__`` arrays (used in place),
        scalars, tuples and records. A kernel returns nothing.

        Methods
        -------
        forall(ntasks, tpb=0, stream=0, sharedmem=0)
            A launch configuration covering ``ntasks`` threads.
        specialize(*args), overloads, definitions
            Compiled specializations, as Numba's dispatcher has them.
        inspect_cuda(), inspect_ptx(signature=None, cc=(9, 0)), inspect_sass(signature=None)
            The CUDA C++, PTX and SASS of each specialization.
        get_regs_per_thread(), get_shared_mem_per_block(), get_local_mem_per_thread()
            Resource usage of the compiled kernel.""")
    return _assemble(call, summary, pyfunc.__doc__, sections)
