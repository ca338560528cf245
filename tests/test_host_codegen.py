"""Host backend code shape, bounds checks and Ctrl-C (issue 15).

The speed of the cpu/parallel targets comes from the shape of the generated loop: the
translated function inlined (no call through the PLT) and a vectorised contiguous loop.
These tests read the disassembly of the built library (objdump); timings live in
benchmarks/bench_host.py.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import _core


def fma3(a, b, c):
    return a * b + c


def entry_disassembly(ufunc, entry_suffix="_c"):
    """objdump of the contiguous entry of the ufunc's first loop."""
    if not shutil.which("objdump"):
        pytest.skip("objdump is not installed")
    src = next(iter(ufunc.inspect_cuda().values()))
    name = re.search(r"__device__ \S+ (nu_\w+)\(", src).group(1)
    unit = textwrap.dedent(f"""\
        #include "elementwise.cuh"
        {src}
        struct nu_op {{
            template <class... A>
            __device__ __forceinline__ auto operator()(A... a) const {{ return {name}(a...); }}
        }};
        NU_ELEMENTWISE_ENTRY({name}{entry_suffix}, nu::elementwise<nu_op, 0, 0ull, unsigned int,
            nu::f32, nu::f32, nu::types<nu::f32, nu::f32, nu::f32>,
            nu::types<nu::f32, nu::f32, nu::f32>>)
        """)
    out = library_disassembly(unit, name + entry_suffix)
    body = re.search(rf"<{name}{entry_suffix}>:\n(.*?)\n\n", out, re.S)
    assert body, f"entry {name}{entry_suffix} not found in the disassembly"
    return name, body.group(1)


def library_disassembly(unit, entry):
    """objdump of the host library built from a translation unit exporting `entry`."""
    lib = _core.build_host(unit, ["-fvisibility=hidden"], [entry])
    path = os.path.join(_core.cache_dir(), lib.key + ".nuc")
    if not os.path.exists(path):
        pytest.skip("the disk cache is disabled: no library file to disassemble")
    data = open(path, "rb").read()[8 + 64 + 8:-32]
    so = os.path.join(os.path.dirname(path), "tmp", f"codegen_{os.getpid()}.so")
    os.makedirs(os.path.dirname(so), exist_ok=True)
    with open(so, "wb") as fh:
        fh.write(data)
    try:
        return subprocess.run(["objdump", "-d", "--no-show-raw-insn", so], capture_output=True,
                              text=True, check=True).stdout
    finally:
        os.unlink(so)


def test_contiguous_loop_inlines_the_function_and_is_vectorised():
    f = nu.vectorize(["float32(float32, float32, float32)"], target="cpu")(fma3)
    name, asm = entry_disassembly(f)
    calls = [line for line in asm.splitlines() if "call" in line]
    assert not any(name in c or "@plt" in c for c in calls), calls
    # packed single-precision multiply and add (SSE or AVX forms)
    assert re.search(r"\bv?mulps\b", asm) and re.search(r"\bv?addps\b", asm), asm[:2000]


def matmul(a, b, out):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = np.float32(0.0)
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            out[i, j] = acc


def test_gufunc_item_loop_inlines_the_function():
    # run_host is flattened: the translated function is inlined into the item loop, so the
    # views' shapes and strides stay in registers across items instead of three 40-byte
    # views being passed on the stack per item (batched 4x4 matmul, 10^5 matrices: 6.1 ->
    # 3.9 ms on the 2-core development machine; bench_host.py -k matmul4).
    if not shutil.which("objdump"):
        pytest.skip("objdump is not installed")
    g = nu.guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)",
                       target="cpu")(matmul)
    src = next(iter(g.inspect_cuda().values()))
    name = re.search(r"__device__ \S+ (nu_\w+)\(", src).group(1)
    view = "nu::garg<nu::f32, 2, 0>"
    unit = textwrap.dedent(f"""\
        #include "gufunc.cuh"
        {src}
        struct nu_op {{
            template <class... A>
            __device__ __forceinline__ void operator()(A... a) const {{ {name}(a...); }}
        }};
        NU_GUFUNC_ENTRY({name}_g, 20, nu::gufunc<nu_op, 1, {view}, {view}, {view}>)
        """)
    out = library_disassembly(unit, name + "_g")
    assert f"<{name}_g>:" in out
    calls = [line for line in out.splitlines() if re.search(r"\bcall", line) and name in line]
    assert not calls, calls
    a = np.random.default_rng(0).random((50, 4, 4), dtype=np.float32)
    np.testing.assert_allclose(g(a, a), a @ a, rtol=1e-5)


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as fh:
            return next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), [])
    except OSError:
        return []


def test_default_build_uses_the_cpus_vector_width(monkeypatch):
    # -march=native by default: 32-byte AVX registers where the CPU has AVX2; the SSE2
    # baseline (16-byte xmm only) with NUMBACUDA_UFUNC_HOST_NATIVE=0.
    if "avx2" not in cpu_flags():
        pytest.skip("the CPU has no AVX2")
    f = nu.vectorize(["float32(float32, float32, float32)"], target="cpu")(fma3)
    monkeypatch.delenv("NUMBACUDA_UFUNC_HOST_NATIVE", raising=False)
    _, native = entry_disassembly(f)
    assert re.search(r"\bvmulps\b.*%ymm", native) and re.search(r"\bvaddps\b.*%ymm", native), native[:2000]
    monkeypatch.setenv("NUMBACUDA_UFUNC_HOST_NATIVE", "0")
    _, baseline = entry_disassembly(f)
    assert "%ymm" not in baseline and re.search(r"\bmulps\b", baseline), baseline[:2000]


def test_no_fused_multiply_add_in_default_builds():
    # -ffp-contract=off is not enough with FMA enabled: GCC 12's SLP vectoriser fused
    # Smith's division (a.im - a.re * ratio...) into vfmsubadd, which changed cmath.log(z, b)
    # results. Default (-march=native) builds have no FMA instruction at all.
    if not shutil.which("objdump"):
        pytest.skip("objdump is not installed")
    src = textwrap.dedent("""\
        #include "nu_scalar.cuh"
        extern "C" __attribute__((visibility("default")))
        void nu_quot_probe(const nu::c128* a, const nu::c128* b, nu::c128* o, long n) {
            for (long i = 0; i < n; ++i) o[i] = nu::log(a[i], b[i]) + a[i] * b[i] - b[i];
        }
        """)
    lib = _core.build_host(src, ["-fvisibility=hidden"], ["nu_quot_probe"])
    path = os.path.join(_core.cache_dir(), lib.key + ".nuc")
    if not os.path.exists(path):
        pytest.skip("the disk cache is disabled: no library file to disassemble")
    so = os.path.join(os.path.dirname(path), "tmp", f"fma_probe_{os.getpid()}.so")
    os.makedirs(os.path.dirname(so), exist_ok=True)
    with open(so, "wb") as fh:
        fh.write(open(path, "rb").read()[8 + 64 + 8:-32])
    try:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", so], capture_output=True,
                             text=True, check=True).stdout
    finally:
        os.unlink(so)
    assert "<nu_quot_probe>:" in out
    fused = [line for line in out.splitlines() if re.search(r"\bv?f(n)?m(add|sub)\w*(p|s)[sd]\b", line)]
    assert not fused, fused[:5]


def test_contiguous_loop_results_and_in_place_output():
    f = nu.vectorize(["float32(float32, float32, float32)"], target="cpu")(fma3)
    rng = np.random.default_rng(5)
    for n in (0, 1, 3, 17, 1000, 70001):
        a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
        np.testing.assert_array_equal(f(a, b, c), a * b + c)
        expected = a * b + c
        f(a, b, c, out=a)  # the output is exactly an input
        np.testing.assert_array_equal(a, expected)
    a = np.array([np.nan, np.inf, -0.0, 1e38], np.float32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(f(a, a, np.float32(2.0)), a * a + np.float32(2.0))


@pytest.mark.parametrize("target", ["cpu", "parallel"])
def test_large_launch_chunks_cover_every_element(target):
    f = nu.vectorize(["float64(float64, float64)"], target=target)(lambda_free_add)
    n = 1_000_003  # not a multiple of any chunk
    a = np.arange(n, dtype=np.float64)
    out = np.full(n, np.nan)
    f(a, 1.5, out=out)
    np.testing.assert_array_equal(out, a + 1.5)


def lambda_free_add(x, y):
    return x + y


def mixed3(a, b, c):
    return a * 2.0 - b + c


STRIDED_CASES = {
    "F-order": lambda a, b, c: (np.asfortranarray(a), b, c),
    "transposed": lambda a, b, c: (a.T.copy().T, b.T.copy().T, c),
    "reversed": lambda a, b, c: (a[::-1, ::-1], b, c[:, ::-1]),
    "step": lambda a, b, c: (np.repeat(a, 2, axis=1)[:, ::2], b, c),
    "broadcast-row": lambda a, b, c: (a, b[:1], c),
    "broadcast-column": lambda a, b, c: (a, b[:, :1], c[:, :1]),
}


@pytest.mark.parametrize("target", ["cpu", "parallel"])
@pytest.mark.parametrize("case", sorted(STRIDED_CASES))
def test_strided_loop_runs_every_element_once(target, case):
    # The strided host loop walks innermost runs from an arbitrary linear start (the
    # parallel target's chunks begin mid-row): results must equal NumPy's for every
    # layout, with the unit-stride fast path and the strided path both exercised.
    f = nu.vectorize(["float64(float64, float64, float64)", "int32(int32, int32, int32)"],
                     target=target)(mixed3)
    rng = np.random.default_rng(9)
    for shape in ((1, 1), (3, 5), (517, 333), (1001, 1)):
        a, b, c = (rng.standard_normal(shape) * 100 for _ in range(3))
        a, b, c = STRIDED_CASES[case](a, b, c)
        np.testing.assert_array_equal(f(a, b, c), a * 2.0 - b + c)
        ai, bi, ci = (x.astype(np.int32) for x in (a, b, c))
        np.testing.assert_array_equal(f(ai, bi, ci), ai * 2 - bi + ci)
        out = np.full(np.broadcast_shapes(a.shape, b.shape, c.shape), np.nan, order="F")
        f(a, b, c, out=out[...])
        np.testing.assert_array_equal(out, a * 2.0 - b + c)
    three_d = rng.standard_normal((7, 40, 9)).transpose(2, 0, 1)
    np.testing.assert_array_equal(f(three_d, 1.0, three_d[:, :1, :]),
                                  three_d * 2.0 - 1.0 + three_d[:, :1, :])


# ---- bounds checks (item 5)

def take(a, k, o):
    o[0] = a[k]


def make_take(target, **opts):
    return nu.guvectorize(["void(float64[:], int64, float64[:])"], "(n),()->()",
                          target=target, **opts)(take)


@pytest.mark.emulation
def test_emulated_gufunc_refuses_out_of_bounds_index():
    g = make_take("cuda")
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(g(a, np.array([0, 3, -1])), [0.0, 7.0, 11.0])
    with pytest.raises(IndexError, match=r"take\(\): index 4 is out of bounds for axis 0 "
                                         r"with size 4 \(loop index 1\)"):
        g(a, np.array([0, 4, 1]))
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 0"):
        g(a, np.array([-5, 0, 1]))


@pytest.mark.parametrize("target", ["cpu", "parallel"])
def test_cpu_gufunc_checks_only_when_asked(target, monkeypatch):
    a = np.arange(12.0).reshape(3, 4)
    checked = make_take(target, boundscheck=True)
    with pytest.raises(IndexError, match=r"take\(\): index 9 is out of bounds for axis 0"):
        checked(a, np.array([0, 1, 9]))
    np.testing.assert_array_equal(checked(a, np.array([1, 2, 3])), [1.0, 6.0, 11.0])
    monkeypatch.setenv("NUMBACUDA_UFUNC_BOUNDSCHECK", "1")
    from_env = make_take(target)
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        from_env(a, np.array([0, 1, 9]))
    monkeypatch.delenv("NUMBACUDA_UFUNC_BOUNDSCHECK")
    unchecked = make_take(target)  # Numba's default: no checks, in-bounds results exact
    np.testing.assert_array_equal(unchecked(a, np.array([1, 2, 3])), [1.0, 6.0, 11.0])


# ---- Ctrl-C (item 6)

LONG_KERNEL = textwrap.dedent("""
    import os, signal, sys, threading, time
    import numpy as np
    import numbacuda_ufunc as nu
    from numbacuda_ufunc import cuda

    @cuda.jit
    def inc(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    def spin(x):
        s = x
        for k in range(4000):  # 200 ended within the 1 s on 16 cores
            s = s * 0.999 + 1.0
        return s

    # Python leaves SIGINT ignored when the parent process ignored it (exec inherits the
    # disposition): restore the default, so the test does not depend on its runner.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    which = sys.argv[1]
    a = np.zeros(1, np.float32)
    inc[1, 1](a)  # compile outside the timed part
    f = nu.vectorize(["float64(float64)"], target=which)(spin) if which != "kernel" else None
    if f is not None:
        f(np.zeros(10))
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t0 = time.perf_counter()
    try:
        if which == "kernel":
            inc[2**31 - 1, 1024](a)  # about ten hours if it ran to the end
        else:
            f(np.zeros(200_000_000 // 8 * 2))  # a minute on 16 cores if it ran to the end
        print("finished")
    except KeyboardInterrupt:
        print("interrupted after %.2f s" % (time.perf_counter() - t0))
""")


@pytest.mark.parametrize("which", ["kernel", "cpu", "parallel"])
def test_ctrl_c_stops_a_long_host_launch(tmp_path, which):
    script = tmp_path / "long_launch.py"
    script.write_text(LONG_KERNEL)
    env = dict(os.environ, NUMBACUDA_UFUNC_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, str(script), which], env=env, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    m = re.search(r"interrupted after ([\d.]+) s", out.stdout)
    assert m, out.stdout + out.stderr[-2000:]
    # The SIGINT comes after 1 s; the launch stops once the chunks being run end. A parallel
    # chunk is at most 16 grains (about 1.2 s here on 2 cores; 25 s+ when it was a quarter
    # of a thread's share), so 10 s leaves room for a loaded machine.
    assert float(m.group(1)) < 10


def test_sigint_handler_is_restored_after_a_launch():
    before = signal.getsignal(signal.SIGINT)
    f = nu.vectorize(["float64(float64, float64)"], target="cpu")(lambda_free_add)
    f(np.zeros(1_000_000), 1.0)
    assert signal.getsignal(signal.SIGINT) is before


_FASTMATH_CHILD = textwrap.dedent("""
    import numpy as np
    import numbacuda_ufunc as nu
    tiny = np.nextafter(0.0, 1.0)  # the smallest denormal
    assert tiny * 1.0 > 0.0
    f = nu.vectorize(["float64(float64)"], target="cpu", fastmath=True)(lambda x: x * 2.0 + 1.0)
    assert f(np.float64(3.0)) == 7.0
    print(float(tiny * 1.0), float(np.multiply(tiny, 1.0)))
""")


def test_a_fastmath_host_build_keeps_denormals_of_the_process():
    """g++'s -ffast-math links crtfastmath.o, whose constructor sets flush-to-zero and
    denormals-are-zero when the library is loaded; loading restores the floating-point
    environment, so the process's later denormal arithmetic (Python's, NumPy's) is
    unchanged. In a child process: a failure would poison this one."""
    out = subprocess.run([sys.executable, "-c", _FASTMATH_CHILD], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["5e-324", "5e-324"]
