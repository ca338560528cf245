"""Compiling translated functions with the C++ engine: the NVRTC/host-build plumbing
shared by the decorators and by ``cuda.compile*`` (cuda/_compile.py). Lives outside ``compiler/`` so the
translator never imports ``_core``."""

from __future__ import annotations

import os
import threading
import warnings

from .. import config
from ..compiler import HEADER, translate
from ..compiler._linking import LTOIR, PTXSource
from ..compiler._source import load_source
from ..compiler._types import ctype
from ..compiler.translate import line_directive, line_directives
from ..config import extra_search_paths
from ..errors import CompileError, NumbaInvalidConfigWarning, NumbaWarning
from ..types import Array, CPointer, Scalar, parse_signature, void
from ._cuda_wheels import wheel_dirs

__all__ = ["DEFAULT_CC", "compile_cuda_source", "core", "device_ptx"]

# Used when no device is present and no cc is given: the newest architecture that every
# supported NVRTC (CUDA 12.0+) can target.
DEFAULT_CC = (9, 0)

_setup_lock = threading.Lock()
_core_module = None


def core():
    """The C++ engine, with the wheel search paths configured once."""
    global _core_module
    if _core_module is None:
        with _setup_lock:
            if _core_module is None:
                from .. import _core

                libs, incs, _ = wheel_dirs()
                _core.set_wheel_search_paths(libs, incs)
                refusal = _core.cache_dir_refusal()
                if refusal:  # a folder others can write to would run their code as ours
                    warnings.warn(f"{refusal}; compiled kernels are kept in memory only (set "
                                  f"NUMBACUDA_UFUNC_CACHE_DIR to a folder only you can write "
                                  f"to)", NumbaWarning, stacklevel=3)
                _core_module = _core
    return _core_module


def _default_cc():
    cur = getattr(core(), "current_device_cc", None)  # provided by the runtime when present
    if cur is not None:
        try:
            return tuple(cur())
        except RuntimeError:  # CudaSupportError/CudaError: no usable device
            return DEFAULT_CC
    return DEFAULT_CC


_OUTPUTS = ("ptx", "ltoir", "cubin")
_ARCH_SUFFIXES = ("a", "f")  # sm_90a (architecture-specific), sm_100f (family-specific)


def _target(cc, api):
    """``((major, minor), arch_options)`` for ``cc``: ``(major, minor)`` or Numba's
    ``(major, minor, "a")`` / ``(major, minor, "f")``; None picks the current device's."""
    if cc is None:
        return _default_cc(), []
    try:
        parts = tuple(cc)
    except TypeError:
        parts = ()
    ok = (len(parts) in (2, 3) and all(isinstance(v, int) and not isinstance(v, bool)
                                       and v >= 0 for v in parts[:2])
          and (len(parts) == 2 or parts[2] in _ARCH_SUFFIXES))
    if not ok:
        raise TypeError(f"{api}: cc must be (major, minor) or (major, minor, 'a'|'f') "
                        f"(got {cc!r})")
    if len(parts) == 2:
        return parts[:2], []
    return parts[:2], [f"{parts[0]}{parts[1]}{parts[2]}"]


def _launch_bounds(launch_bounds, api):
    """Numba's launch bounds as the arguments of ``__launch_bounds__``: a scalar or one to
    three items (threads per block, minimum blocks per SM, maximum blocks per cluster)."""
    items = (launch_bounds,) if isinstance(launch_bounds, int) else tuple(launch_bounds)
    if len(items) > 3:
        raise ValueError(f"{api}: Got {len(items)} launch bounds: {launch_bounds!r}. A maximum "
                         f"of three are supported: (max_threads_per_block, min_blocks_per_sm, "
                         f"max_blocks_per_cluster)")
    if not items or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                            for v in items):
        raise ValueError(f"{api}: launch_bounds must be a positive int or a tuple of one to "
                         f"three positive ints (got {launch_bounds!r})")
    return ", ".join(map(str, items))


class _Compiled:
    """One compile's result: code, return type, and the files its code asks to link."""

    def __init__(self, code, resty, links):
        self.code, self.resty, self.links = code, resty, links


def _compile(api, pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi, abi_info,
             output, forceinline, launch_bounds, outputs=_OUTPUTS, kernel_unit=None):

    if output not in outputs:
        raise NotImplementedError(f"{api}: Unsupported output type: {output} (output must be "
                                  f"one of {', '.join(outputs)})")
    if forceinline and output != "ltoir":
        raise ValueError(f"{api}: Can only designate forced inlining in LTO-IR")
    if abi is None:  # Numba's default is "c", which it refuses for kernels
        abi = "c" if device else "numba"
    if abi not in ("c", "numba"):
        raise NotImplementedError(f"{api}: Unsupported ABI: {abi} (expected 'c' or 'numba')")
    if abi == "c" and not device:
        raise NotImplementedError(f"{api}: The C ABI is not supported for kernels "
                                  f"(device=False); use abi='numba'")
    if forceinline and not device:
        raise ValueError(f"{api}: Cannot force-inline kernels")
    if launch_bounds is not None and device:
        raise ValueError(f"{api}: launch_bounds apply to kernels (device=False), not to "
                         f"device functions (got {launch_bounds!r})")
    bounds = _launch_bounds(launch_bounds, api) if launch_bounds is not None else None
    if abi_info is not None and not isinstance(abi_info, dict):
        raise TypeError(f"{api}: abi_info must be a dict (got {abi_info!r})")
    if abi_info and (abi != "c" or set(abi_info) - {"abi_name"}):
        raise TypeError(f"{api}: abi_info takes only 'abi_name', with abi='c' (got "
                        f"{abi_info!r} with abi={abi!r})")
    if debug is None:
        debug = bool(getattr(config, "CUDA_DEBUGINFO_DEFAULT", 0))
    if opt is None:
        opt = getattr(config, "OPT", 3) != 0
    if debug and opt:
        warnings.warn("debug=True with opt=True is not supported by CUDA: Numba warns that "
                      "it may crash there; set debug=False or opt=False (NVRTC compiles it "
                      "with -G -dopt=on)", NumbaInvalidConfigWarning, stacklevel=3)
    fn = getattr(pyfunc, "py_func", pyfunc)
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise CompileError(f"{api}: expected a Python function (got {pyfunc!r})")
    s = parse_signature(sig)
    for a in s.args:
        if not isinstance(a, (Scalar, Array, CPointer)):
            raise CompileError(f"{api}: argument types must be scalar, array or pointer "
                               f"(CPointer) types (got {a})")
    (major, minor), arch = _target(cc, api)
    cubin = output != "ptx"  # LTO IR and CUBIN name an sm_XY; PTX a compute_XY
    extra = [f"--gpu-architecture={'sm' if cubin else 'compute'}_{a}" for a in arch]
    line_info = bool(debug or lineinfo)
    if debug:  # -G: device debug information, NVVM unoptimised unless opt (-dopt=on)
        extra += ["-G"] + (["-dopt=on"] if opt else [])
    elif lineinfo:
        extra.append("-lineinfo")
    if not opt and not debug and output == "cubin":
        extra.append("-Xptxas=-O0")  # NVRTC has no NVVM level outside -G: ptxas's
    links = tuple(dict.fromkeys(tuple(getattr(pyfunc, "link", ()) or ())))
    if device:
        source, resty, more = _device_unit(fn, s, abi, abi_info, line_info, forceinline, api)
        extra.append("-rdc=true")  # keeps an unreferenced extern device function
    else:
        # device=False: cuda.compile*'s kernel source, from the kernel layer (cuda/_compile.py)
        source, resty, more = kernel_unit(fn, s, debug, fastmath, line_info, bounds, links,
                                          api)
    links = tuple(dict.fromkeys(links + more))
    if line_info:
        source = line_directives(source)
    if output == "ltoir":
        extra += [o for o in ("-rdc=true", "-dlto") if o not in extra]
    return _Compiled(_nvrtc(output, source, (major, minor), fastmath, extra), resty, links)


def _compile_cu(obj, item, output, debug, lineinfo, opt, cc, api):
    """A linked CUDA C++ file compiled as a kernel's link step compiles it: its folder and
    the toolkit's headers on the include path, no fastmath, lines named after the file."""

    if debug is None:
        debug = bool(getattr(config, "CUDA_DEBUGINFO_DEFAULT", 0))
    if opt is None:
        opt = getattr(config, "OPT", 3) != 0
    path = item if isinstance(item, str) else None
    code = compile_cuda_source(obj.data.decode("utf-8", "replace"), path or obj.name, cc,
                               output, lineinfo=lineinfo, debug=debug, opt=opt, api=api,
                               include_dir=os.path.dirname(path) if path else None)
    stem = os.path.splitext(obj.name)[0]
    if output == "ptx":
        return PTXSource(code, name=stem + ".ptx")
    return LTOIR(code, name=stem + ".ltoir")


def compile_cuda_source(source, name, cc, output, lineinfo=False, debug=False, opt=True,
                        api="compile_all()", include_dir=None):
    """CUDA C++ text -> relocatable PTX text (``output="ptx"``) or LTO IR bytes
    (``"ltoir"``) for ``cc``, its lines named ``name``, as NVRTC compiles it without our
    fastmath or FMA settings (a user's file is compiled as it is)."""
    (major, minor), arch = _target(cc, api)
    cubin = output != "ptx"
    extra = [f"--gpu-architecture={'sm' if cubin else 'compute'}_{a}" for a in arch]
    extra += ["-rdc=true"] + (["-dlto"] if output == "ltoir" else [])
    if debug:
        extra += ["-G"] + (["-dopt=on"] if opt else [])
    elif lineinfo:
        extra.append("-lineinfo")

    # The toolkit's include folder and CCCL's (include/cccl since CUDA 13, where nvcc looks
    # by itself and NVRTC does not): cooperative_groups.h includes <cuda/std/type_traits>.
    for folder in (include_dir, *extra_search_paths(), _toolkit_include_dir(),
                   core().cub_include_dir()):
        if folder and "-I" + folder not in extra:
            extra.append("-I" + folder)
    source = line_directive(name, 1) + "\n" + source
    return _nvrtc(output, source, (major, minor), False, extra)


def _nvrtc(output, source, cc, fastmath, extra):
    """NVRTC through the kernel cache: PTX text for ``output="ptx"``, else CUBIN or LTO IR
    bytes. A ``-G`` build without ``-dopt=on`` runs in a child process: NVRTC 13.0 carries
    its unoptimised device code generation into every later build of the process (a
    reduction built after one spilled 424 bytes per thread to local memory and stopped
    inlining its functions; NVIDIA Warp reports the same process-wide state for 13.1+,
    github.com/NVIDIA/warp/pull/1933), so it must never run in ours."""
    if "-G" in extra and "-dopt=on" not in extra:
        return _nvrtc_in_child(output, source, cc, fastmath, extra)
    return _nvrtc_here(output, source, cc, fastmath, extra)


def _nvrtc_here(output, source, cc, fastmath, extra):
    build = core().compile_ptx if output == "ptx" else core().compile_cubin
    return build(source, tuple(cc), fastmath, list(extra))


def _nvrtc_in_child(output, source, cc, fastmath, extra):
    import pickle
    import subprocess
    import sys

    request = pickle.dumps((output, source, tuple(cc), fastmath, list(extra)))
    run = subprocess.run([sys.executable, "-c", "from numbacuda_ufunc.toolchain._compile import "
                          "_nvrtc_child_main; _nvrtc_child_main()"],
                         input=request, capture_output=True, check=False)
    try:
        status, value, log = pickle.loads(run.stdout)
    except Exception as e:
        raise CompileError(f"NVRTC -G build in a child process failed (exit code "
                           f"{run.returncode}): {run.stderr.decode(errors='replace')[-2000:]}") from e
    if status != "ok":
        raise CompileError(value, log)
    return value


def _nvrtc_child_main():
    """The child of ``_nvrtc_in_child``: one build, its result or error pickled to stdout."""
    import pickle
    import sys

    output, source, cc, fastmath, extra = pickle.load(sys.stdin.buffer)
    try:
        result = ("ok", _nvrtc_here(output, source, cc, fastmath, extra), "")
    except CompileError as e:
        result = ("error", str(e), getattr(e, "log", ""))
    sys.stdout.buffer.write(pickle.dumps(result))


def _toolkit_include_dir():
    """The CUDA include folder (cuda_fp16.h...) as the engine finds it: a toolkit's, else
    the nvidia-cuda-runtime wheel's; "" when none."""
    return core().cuda_include_dir()


def _device_unit(fn, s, abi, abi_info, line_info, forceinline, api):
    ret = s.return_type if isinstance(s.return_type, Scalar) else None
    tf = translate(fn, s.args, return_type=ret, line_info=line_info, internal_linkage=True)
    params = ", ".join(f"{ctype(t)} a{i}" for i, t in enumerate(s.args))
    call = f"{tf.name}({', '.join(f'a{i}' for i in range(len(s.args)))})"
    name = f"{tf.name}_export"
    if abi == "c" and abi_info and "abi_name" in abi_info:
        name = abi_info["abi_name"]
        if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
            raise CompileError(f"{api}: abi_info['abi_name'] must be a C identifier (got "
                               f"{name!r})")
    elif abi == "c":
        name = _c_abi_name(fn)
    rt = ctype(tf.return_type)
    body = f"return {call};" if tf.return_type is not None else f"{call};"
    inline = "__forceinline__ " if forceinline else ""
    wrapper = f'extern "C" __device__ {inline}{rt} {name}({params}) {{ {body} }}\n'
    if line_info:  # the exported function is the Python one: its def line, as a kernel's
        src = load_source(fn)
        wrapper = line_directive(src.filename, src.node.lineno + src.line_offset) + "\n" + wrapper
    resty = tf.return_type if tf.return_type is not None else void
    return HEADER + tf.source + wrapper, resty, tf.links


def _c_abi_name(fn) -> str:
    """The C ABI name of a function, as Numba makes it: the last part of its qualified name
    with every byte outside ``[A-Za-z0-9_]`` written ``_xx`` (``<lambda>`` ->
    ``_3clambda_3e``; a non-ASCII letter by the bytes of its UTF-8)."""
    last = fn.__qualname__.split(".")[-1]
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else
                   "".join(f"_{b:02x}" for b in c.encode("utf-8")) for c in last)


def device_ptx(pyfunc, sig, cc, fastmath):
    """``compile_ptx(pyfunc, sig, device=True, cc=cc, fastmath=fastmath)[0]``: the PTX of a
    device function, for the inspect_ptx() of ufuncs and device functions."""
    return _compile("compile_ptx()", pyfunc, sig, None, False, True, fastmath, cc, None,
                    "numba", None, "ptx", False, None).code
