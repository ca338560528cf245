"""A kernel's inspection: its CUDA C++, PTX, LTO PTX and SASS per specialization, and the
resource use ptxas reports (registers, shared, local and constant memory, the largest
block) read from the CUBIN (Kernel's part for Numba's inspect_* and get_* methods)."""

from __future__ import annotations

from .. import _core
from ..compiler._linking import read_link_files
from ..toolchain import _sass
from ._signatures import _kernel_signature, _same_types, _sig_text
from .device_function import _NO_LLVM


class KernelInspection:
    """Kernel\'s ``inspect_*`` and ``get_*`` methods (Numba\'s names), per specialization."""

    # ---- inspection -----------------------------------------------------------------------
    def _selected(self, signature):
        if signature is None:
            return list(range(len(self._specs)))
        want = _kernel_signature(signature, self.__name__).args
        hits = [i for i, tk in enumerate(self._specs) if _same_types(tk.arg_types, want)]
        if not hits:
            raise KeyError(f"kernel '{self.__name__}' has no specialization for {signature}")
        return hits

    def inspect_cuda(self, signature=None) -> dict:
        """Argument types -> the complete CUDA C++ translation unit NVRTC compiles."""
        return {_sig_text(self._specs[i].arg_types): self._source(i, False)
                for i in self._selected(signature)}

    def inspect_ptx(self, signature=None, cc=(9, 0)):
        """Argument types -> PTX, compiled by NVRTC (no GPU needed); with a signature, that
        specialization's PTX (a str), as Numba's ``inspect_asm(signature)``."""
        # A kernel calling foreign functions is relocatable code: their definitions come
        # at link time.
        return self._each(signature, lambda i: self._ptx(i, cc))

    def _ptx(self, index, cc):
        return _core.compile_ptx(self._source(index, False), tuple(cc), self.fastmath,
                                 (["-rdc=true"] if self._specs[index].foreign else [])
                                 + self._nvrtc_extra)

    inspect_asm = inspect_ptx

    def inspect_lto_ptx(self, signature=None, cc=None):
        """PTX of the whole linked program (Numba's ``inspect_lto_ptx``): a kernel with
        link files is compiled to LTO IR and linked with them by nvJitLink, which emits
        the optimised PTX; a kernel without any is one program already, so this is its
        PTX. For ``cc`` (the current device's, or sm_90 without one); no GPU is needed. A
        dict keyed like inspect_ptx, or a str with ``signature``."""

        cc = _sass.inspection_cc() if cc is None else tuple(cc)

        def one(i):
            files = self._link_files(i)
            if files is None:
                return self._ptx(i, cc)
            return _core.link_kernel_cubin(self._source(i, False), files, cc, self.fastmath,
                                           True)

        return self._each(signature, one)

    def inspect_llvm(self, signature=None):
        raise NotImplementedError(_NO_LLVM.format(what=f"kernel '{self.__name__}'"))

    # Numba's SASS and resource queries. Numba asks the driver about the loaded function;
    # here they come from the CUBIN NVRTC builds for the current device (sm_90 with no
    # device) and the toolkit's cuobjdump/nvdisasm, so they work without a GPU. With
    # ``signature`` one value; without, a dict keyed like inspect_ptx.
    def _per_spec(self, signature, what, specialized_value=True):
        """``what(index, cubin)`` as Numba's resource queries give it: for ``signature``,
        or the one specialization of a specialized kernel, the value; else a dict keyed
        like ``overloads`` (tuples of argument types). Numba's ``inspect_sass`` gives the
        dict for a specialized kernel too (``specialized_value=False``)."""
        if signature is not None or (specialized_value and self.specialized and self._specs):
            i = self._selected(signature)[0] if signature is not None else 0
            return what(i, self._cubin(i))
        return self._by_types(lambda i: what(i, self._cubin(i)))

    def _each(self, signature, one):
        """``one(index)`` for the specialization of ``signature`` (its result), or for every
        specialization (a dict keyed like ``overloads``: tuples of argument types)."""
        if signature is not None:
            return one(self._selected(signature)[0])
        return self._by_types(one)

    def _link_paths(self, tk) -> tuple:
        """The files a specialization links: the kernel's and its device functions'."""
        return tuple(dict.fromkeys(self.link + tk.links))

    def _link_files(self, index):
        """Specialization ``index``'s link files read as (path, kind, bytes), or None."""
        paths = self._link_paths(self._specs[index])
        return read_link_files(paths, f"kernel '{self.__name__}'") if paths else None

    def _cubin(self, index, cc=None) -> bytes:
        """The CUBIN of specialization ``index`` for ``cc`` (the current device's, or sm_90
        without one), linked with its link files by nvJitLink when it has any. No GPU is
        needed."""

        cc = _sass.inspection_cc() if cc is None else tuple(cc)
        files = self._link_files(index)
        if files is None:
            return _sass.cubin_of(self._source(index, False), self.fastmath,
                                  options=self._nvrtc_extra, cc=cc)
        return _core.link_kernel_cubin(self._source(index, False), files, cc, self.fastmath)

    def _usage(self, signature, key, api):
        return self._per_spec(signature, lambda i, cubin: self._usage_of(i, cubin, key, api))

    def _usage_of(self, index, cubin, key, api):

        usage = _sass.resource_usage(cubin, api)
        entry = self._entry(index)
        if entry not in usage:
            raise KeyError(f"{api}: the CUBIN has no function {entry!r} "
                           f"(it has {sorted(usage)})")
        return usage[entry][key]

    def inspect_sass(self, signature=None):
        """SASS of the kernel (``cuobjdump -sass`` of its CUBIN); no GPU needed."""

        return self._per_spec(signature, lambda i, cubin: _sass.sass_of(cubin), False)

    def get_regs_per_thread(self, signature=None):
        """Registers each thread of the kernel uses."""
        return self._usage(signature, "regs", "get_regs_per_thread()")

    def get_shared_mem_per_block(self, signature=None):
        """Bytes of static shared memory per block (``cuda.shared.array`` of fixed shape)."""
        return self._usage(signature, "shared", "get_shared_mem_per_block()")

    def get_local_mem_per_thread(self, signature=None):
        """Bytes of local memory per thread (stack frame and register spills)."""
        return self._usage(signature, "local", "get_local_mem_per_thread()")

    def get_const_mem_size(self, signature=None):
        """Bytes of user constant memory (``cuda.const.array_like`` data)."""
        return self._usage(signature, "const", "get_const_mem_size()")

    def get_max_threads_per_block(self, signature=None):
        """Most threads per block a launch may use: 1024, or fewer where the kernel's
        registers (read from its CUBIN, as the driver allocates them) or its
        ``launch_bounds`` allow fewer."""
        return self._per_spec(signature, lambda i, cubin: self._max_threads(i, cubin))

    def _max_threads(self, index, cubin):
        regs = self._usage_of(index, cubin, "regs", "get_max_threads_per_block()")
        per_warp = -(-max(regs, 1) * 32 // 256) * 256  # allocated per warp, 256 at a time
        threads = min(1024, 65536 // per_warp * 32)
        return min(threads, self._bounds_threads) if self._bounds_threads else threads
