"""Kernel inspection without a GPU: a CUBIN (built by NVRTC for the current device, or for
sm_90 when there is none) disassembled to SASS, and its resource usage (registers, shared,
local and constant memory), read with the CUDA toolkit's ``cuobjdump``/``nvdisasm``.

The tools come from the toolkit's ``bin/`` (``NUMBACUDA_UFUNC_CUDA_HOME``, ``CUDA_HOME``,
``CUDA_PATH``, ``/usr/local/cuda``), the ``nvidia-cuda-cuobjdump``/``nvidia-cuda-nvdisasm``
wheels, or ``PATH``, in that order."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile

from ..errors import CudaSupportError
from ._compile import DEFAULT_CC, _default_cc, core

__all__ = ["find_tool", "inspection_cc", "cubin_of", "sass_of", "resource_usage"]

_INSTALL_HINT = ("install the CUDA toolkit (set NUMBACUDA_UFUNC_CUDA_HOME to it) or "
                 "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")


def _tool_dirs():
    for var in ("NUMBACUDA_UFUNC_CUDA_HOME", "CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            yield os.path.join(root, "bin")
    yield "/usr/local/cuda/bin"
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    for root in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cu13/bin", "cu12/bin", "cuda_cuobjdump/bin", "cuda_nvdisasm/bin"):
            yield os.path.join(root, sub)


def find_tool(name: str) -> str | None:
    """Path of the toolkit program ``name`` (``cuobjdump``, ``nvdisasm``), or None."""
    for d in _tool_dirs():
        path = os.path.join(d, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def _require(api: str, *names: str) -> tuple[str, str]:
    for name in names:
        path = find_tool(name)
        if path is not None:
            return name, path
    looked = ", ".join(dict.fromkeys(_tool_dirs()))
    missing = ", ".join(f"{name} was not found" for name in names)  # Numba's words, per tool
    raise CudaSupportError(f"{api}: needs {' or '.join(names)} from the CUDA toolkit: {missing} "
                           f"(looked in {looked} and PATH); {_INSTALL_HINT}")


def inspection_cc() -> tuple[int, int]:
    """The architecture inspected: the current device's, clamped to what this NVRTC can
    build a CUBIN for (a device newer than NVRTC runs JIT-compiled PTX, whose SASS is
    not known in advance), or sm_90 with no device."""
    cc = tuple(_default_cc())
    archs = core().nvrtc_supported_archs()
    if not archs:
        return cc
    (major, minor), cubin = core().nvrtc_device_target(cc[0] * 10 + cc[1], archs)
    if cubin:
        return (major, minor)
    best = max(a for a in archs if a <= cc[0] * 10 + cc[1])
    return (best // 10, best % 10) if best else DEFAULT_CC


def cubin_of(source: str, fastmath: bool = False, options=(), cc=None) -> bytes:
    """CUBIN of a complete translation unit (through the kernel cache)."""
    cc = inspection_cc() if cc is None else tuple(cc)
    return core().compile_cubin(source, cc, fastmath, list(options))


def _run_on_cubin(api: str, cubin: bytes, tools: tuple[str, ...], flags: dict) -> str:
    name, path = _require(api, *tools)
    fd, tmp = tempfile.mkstemp(suffix=".cubin", prefix="numbacuda_ufunc_")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(cubin)
        done = subprocess.run([path, *flags[name], tmp], capture_output=True, text=True,
                              check=False)
    finally:
        os.unlink(tmp)
    if done.returncode != 0:
        raise CudaSupportError(f"{api}: {name} failed (exit {done.returncode}): "
                               f"{done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def sass_of(cubin: bytes, api: str = "inspect_sass()") -> str:
    """SASS text of every function in ``cubin`` (``cuobjdump -sass``, else ``nvdisasm``)."""
    return _run_on_cubin(api, cubin, ("cuobjdump", "nvdisasm"),
                         {"cuobjdump": ["-sass"], "nvdisasm": ["-c"]})


_FUNCTION = re.compile(r"^\s*Function\s+(\S+?):?\s*$")
_FIELD = re.compile(r"(REG|STACK|SHARED|LOCAL|CONSTANT\[(\d+)\]|TEXTURE|SURFACE|SAMPLER):(\d+)")


# The shared memory the driver reserves for system use in every block on sm_80 and later
# (CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK). From sm_90 on, ptxas lays it out
# inside the kernel's shared window: a CUBIN with a `.nv.shared.reserved.0` section puts the
# kernel's own shared data at offset 0x400, and cuobjdump's SHARED counts from 0, so a
# kernel with 400 bytes of shared arrays reads SHARED:1424 (a plain NVRTC kernel as much as
# ours). The driver's CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, which Numba reports, leaves the
# reservation out.
_RESERVED_SHARED = 1024
_RESERVED_SECTION = b"\0.nv.shared.reserved."


def resource_usage(cubin: bytes, api: str = "get_regs_per_thread()") -> dict:
    """Per function in ``cubin``: ``{"regs", "shared", "local", "stack", "const", "const0"}``
    from ``cuobjdump -res-usage``. ``shared`` is the kernel's own static shared memory per
    block, without the 1 KiB the driver reserves in every block on sm_80 and later (as the
    driver's CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES counts it); ``local``
    local memory per thread including the stack frame (spills land there), as the
    driver's CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES counts it; ``const`` the user constant
    bank (``__constant__`` data), as CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES; ``const0`` the
    parameter bank."""
    text = _run_on_cubin(api, cubin, ("cuobjdump",), {"cuobjdump": ["-res-usage"]})
    reserved = _RESERVED_SHARED if _RESERVED_SECTION in cubin else 0
    out, current, common_const = {}, None, 0
    for line in text.splitlines():
        m = _FUNCTION.match(line)
        if m:
            current = m.group(1)
            continue
        fields = _FIELD.findall(line)
        if current is None:  # the module's "Common:" record: the user constant bank
            common_const += sum(int(v) for _, bank, v in fields if bank == "3")
            continue
        if not fields:
            continue
        usage = {"regs": 0, "shared": 0, "local": 0, "stack": 0, "const": 0, "const0": 0}
        for key, bank, value in fields:
            v = int(value)
            if key == "REG":
                usage["regs"] = v
            elif key == "SHARED":
                usage["shared"] = v - reserved if v >= reserved else v
            elif key in ("LOCAL", "STACK"):
                usage[key.lower()] = v
            elif bank == "0":
                usage["const0"] = v
            elif bank == "3":
                usage["const"] = v
        usage["local"] += usage["stack"]
        out[current] = usage
        current = None
    for usage in out.values():
        usage["const"] += common_const
    if not out:
        raise CudaSupportError(f"{api}: cuobjdump -res-usage printed no function records:\n{text}")
    return out


def sources_sass(sources, fastmath: bool = False, options=()) -> str:
    """SASS of several translation units (one CUBIN each), one after the other."""
    return "\n".join(sass_of(cubin_of(src, fastmath, options)) for src in sources)
