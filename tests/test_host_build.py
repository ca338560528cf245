"""Host builds (issue 15): the prelude's math without <cmath>, -march=native, pch-* upkeep.

host_prelude.h includes the C library's math.h and src/kernels/host_math.h adds the C++
overloads that libstdc++'s <math.h> would: the types and the values must be exactly
those of the standard header, or float code would silently run in double.
"""

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from numbacuda_ufunc import _core

UNARY = ["acos", "asin", "atan", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh",
         "tanh", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "logb", "cbrt", "fabs",
         "sqrt", "erf", "erfc", "lgamma", "tgamma", "ceil", "floor", "nearbyint", "rint", "round",
         "trunc", "abs"]
BINARY = ["atan2", "hypot", "pow", "fmod", "remainder", "copysign", "nextafter", "fdim", "fmax",
          "fmin"]
OTHER_RESULT = {"ilogb": "int", "lrint": "long", "llrint": "long long", "lround": "long",
                "llround": "long long"}
CLASSIFY = ["isfinite", "isinf", "isnan", "isnormal", "signbit"]
COMPARE = ["isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater", "isunordered"]


def type_checks() -> str:
    """static_asserts of the result type of every overload, as the C++ standard gives it."""
    lines = [
        "template <class A, class B> struct nu_same { static constexpr bool v = false; };",
        "template <class A> struct nu_same<A, A> { static constexpr bool v = true; };",
        "#define NU_EXPECT(expr, T) static_assert(nu_same<decltype(expr), T>::v, #expr);",
    ]
    floats = [("1.0f", "float"), ("1.0", "double"), ("1.0L", "long double")]
    for f in UNARY:
        for arg, t in floats:
            lines.append(f"NU_EXPECT(::{f}({arg}), {t})")
        if f != "abs":  # abs(int) is int
            lines.append(f"NU_EXPECT(::{f}(1), double)")
    lines.append("NU_EXPECT(::abs(1), int)")
    lines.append("NU_EXPECT(::abs(1L), long)")
    for f, r in OTHER_RESULT.items():
        for arg, _ in floats + [("1", "int")]:
            lines.append(f"NU_EXPECT(::{f}({arg}), {r})")
    for f in BINARY:
        for a, ta in floats + [("1", "int")]:
            for b, tb in floats + [("1", "int")]:
                if ta == tb and ta != "int":
                    r = ta
                elif "long double" in (ta, tb):
                    r = "long double"
                else:
                    r = "double"
                lines.append(f"NU_EXPECT(::{f}({a}, {b}), {r})")
    lines += ["NU_EXPECT(::fma(1.0f, 1.0f, 1.0f), float)", "NU_EXPECT(::fma(1.0f, 1.0f, 1), double)",
              "NU_EXPECT(::fma(1.0, 1.0, 1.0), double)", "NU_EXPECT(::fma(1.0f, 1.0L, 1.0f), long double)",
              "NU_EXPECT(::frexp(1.0f, (int*)0), float)", "NU_EXPECT(::ldexp(1.0f, 2), float)",
              "NU_EXPECT(::ldexp(1, 2), double)", "NU_EXPECT(::scalbn(1.0f, 2), float)",
              "NU_EXPECT(::modf(1.0f, (float*)0), float)", "NU_EXPECT(::nexttoward(1.0f, 2.0L), float)",
              "NU_EXPECT(::remquo(1.0f, 1.0f, (int*)0), float)", "NU_EXPECT(::fpclassify(1.0f), int)"]
    for f in CLASSIFY:
        for arg, _ in floats + [("1", "int")]:
            lines.append(f"NU_EXPECT(::{f}({arg}), bool)")
    for f in COMPARE:
        lines += [f"NU_EXPECT(::{f}(1.0f, 1.0f), bool)", f"NU_EXPECT(::{f}(1.0f, 1), bool)"]
    return "\n".join(lines) + "\n"


def test_result_types_follow_the_standard_header():
    # The very checks, against libstdc++'s own <math.h>: the expectations are the standard's.
    cxx = _core.host_compiler_command()
    if not shutil.which(cxx[0]):
        pytest.skip("no host C++ compiler")
    std = subprocess.run([*cxx, "-std=c++17", "-fsyntax-only", "-x", "c++", "-"],
                         input="#include <math.h>\n#include <stdlib.h>\n" + type_checks(),
                         capture_output=True, text=True)
    assert std.returncode == 0, std.stderr[-3000:]
    # ... and with the prelude that host kernels get.
    lib = _core.build_host(type_checks() + 'extern "C" int nu_types_ok() { return 1; }\n', [],
                           ["nu_types_ok"])
    assert ctypes.CFUNCTYPE(ctypes.c_int)(lib.symbol("nu_types_ok"))() == 1


def value_unit(name: str, t: str) -> str:
    """f(x) (and f(x, y)) for every function over n inputs of type t, as `name`."""
    body = []
    for k, f in enumerate(UNARY):
        body.append(f"o[{k} * n + i] = (double)::{f}(x[i]);")
    base = len(UNARY)
    for k, f in enumerate(BINARY):
        body.append(f"o[{base + k} * n + i] = (double)::{f}(x[i], y[i]);")
    base += len(BINARY)
    for k, f in enumerate(OTHER_RESULT):
        # out-of-range conversions are unspecified: only where the result fits
        body.append(f"o[{base + k} * n + i] = (::fabs(x[i]) < 1e9 && x[i] == x[i]) ? "
                    f"(double)::{f}(x[i]) : 0.0;")
    base += len(OTHER_RESULT)
    for k, f in enumerate(CLASSIFY + ["fpclassify"]):
        body.append(f"o[{base + k} * n + i] = (double)::{f}(x[i]);")
    base += len(CLASSIFY) + 1
    for k, f in enumerate(COMPARE):
        body.append(f"o[{base + k} * n + i] = (double)::{f}(x[i], y[i]);")
    base += len(COMPARE)
    body.append(f"o[{base} * n + i] = (double)::fma(x[i], y[i], x[i]);")
    body.append(f"o[{base + 1} * n + i] = (double)::pow(x[i], 3);")
    body.append(f"o[{base + 2} * n + i] = (double)::ldexp(x[i], 3);")
    count = base + 3
    return (f'extern "C" int {name}_count() {{ return {count}; }}\n'
            f'extern "C" void {name}(const {t}* x, const {t}* y, double* o, long n) {{\n'
            "    for (long i = 0; i < n; ++i) {\n        " + "\n        ".join(body) + "\n    }\n}\n")


@pytest.mark.parametrize("t, dtype", [("float", np.float32), ("double", np.float64)])
def test_values_equal_the_standard_header(t, dtype):
    # The main unit gets the prelude with host_math.h, the linked unit the standard
    # <math.h> (NU_HOST_STD_CMATH): the same expressions must give the same bits.
    lib = _core.build_host(value_unit("nu_slim", t), [], ["nu_slim", "nu_std"],
                           [value_unit("nu_std", t)])
    count = ctypes.CFUNCTYPE(ctypes.c_int)(lib.symbol("nu_slim_count"))()
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long)
    info = np.finfo(dtype)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, 1e-3, np.inf, -np.inf, np.nan,
               info.max, -info.max, info.tiny, info.tiny / 4, -info.tiny / 4, 88.7, 710.0, -745.0,
               1e30, 0.9999999, 1.0000001]
    rng = np.random.default_rng(3)
    x = np.concatenate([special, rng.standard_normal(200) * 10, rng.uniform(-1, 1, 100)])
    x = x.astype(dtype)
    y = np.roll(x, 7)
    n = x.size
    outs = []
    for name in ("nu_slim", "nu_std"):
        o = np.full(count * n, 123.0)
        with np.errstate(all="ignore"):
            proto(lib.symbol(name))(x.ctypes.data, y.ctypes.data, o.ctypes.data, n)
        outs.append(o.reshape(count, n))
    slim, std = outs
    assert np.isfinite(slim).any() and (slim != 123.0).all()
    same = (slim == std) | (np.isnan(slim) & np.isnan(std))
    bad = np.argwhere(~same)
    assert bad.size == 0, [(int(r), float(x[c]), slim[r, c], std[r, c]) for r, c in bad[:10]]
    # float functions ran in float: sin(x) of a float input is a float value
    if t == "float":
        k = UNARY.index("sin")
        assert (slim[k].astype(np.float32) == slim[k])[np.isfinite(slim[k])].all()


def test_module_and_linked_sources_keep_the_standard_header():
    # A linked source may include C++ headers itself: it gets the standard <math.h>.
    linked = "#include <cmath>\n#include <math.h>\n" \
             'extern "C" double nu_linked(double x) { return std::sin(x) + ::sin(1.0f); }\n'
    lib = _core.build_host('extern "C" double nu_linked(double);\n'
                           'extern "C" double nu_main(double x) { return nu_linked(x) + ::cos(1.0f); }\n',
                           [], ["nu_main"], [linked])
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(lib.symbol("nu_main"))
    expected = np.sin(0.25) + float(np.float32(np.sin(np.float32(1.0)))) + float(np.cos(np.float32(1.0)))
    assert f(0.25) == pytest.approx(expected, rel=1e-6)


# ---- pch-* directories of the cache

GC_SCRIPT = textwrap.dedent("""
    import sys
    from numbacuda_ufunc import _core
    src = 'extern "C" double k(double x) { return x + %s; }\\n' % sys.argv[1]
    _core.build_host(src, [], ["k"])
    print("{}")
""")


def run_build(cache_dir, value, extra_env=None):
    env = dict(os.environ, NUMBACUDA_UFUNC_CACHE_DIR=str(cache_dir))
    env.pop("NUMBACUDA_UFUNC_DISABLE_CACHE", None)
    env.update(extra_env or {})
    out = subprocess.run([sys.executable, "-c", GC_SCRIPT, value], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]


def pch_dirs(cache_dir):
    return sorted(p.name for p in cache_dir.iterdir() if p.name.startswith("pch-"))


def test_old_pch_directories_are_collected(tmp_path):
    run_build(tmp_path, "1.0")
    (current,) = pch_dirs(tmp_path)
    now = time.time()

    def fake(name, age):
        d = tmp_path / name
        d.mkdir()
        (d / "nu_host_pch.h.gch").write_bytes(b"x")
        os.utime(d, (now - age, now - age))
        return d

    old = fake("pch-000000000000000000000old", 2 * 86400)     # unused for two days
    recent = [fake(f"pch-00000000000000000000{k:04d}", 3600 + k) for k in range(6)]
    surplus = [fake(f"pch-00000000000000000001{k:04d}", 7200 + k) for k in range(3)]
    busy = fake("pch-0000000000000000000busy", 30)             # in use by another process
    os.utime(tmp_path / current, (now - 3 * 86400, now - 3 * 86400))  # used again below
    run_build(tmp_path, "2.0")
    left = set(pch_dirs(tmp_path))
    assert current in left, "the directory in use is never collected"
    assert old.name not in left
    assert busy.name in left
    # the 8 most recently used stay (busy, current, 6 recent), the rest were > 10 min unused
    assert {d.name for d in recent} <= left
    assert not {d.name for d in surplus} & left
    assert (tmp_path / current).stat().st_mtime > now - 60, "a build touches its pch directory"


def test_collected_pch_directory_is_rebuilt(tmp_path):
    # Another process collected the directory while this one still had it: rebuilt, no error.
    script = textwrap.dedent("""
        import glob, os, shutil
        from numbacuda_ufunc import _core
        _core.build_host('extern "C" int a() { return 1; }\\n', [], ["a"])
        (d,) = glob.glob(os.path.join(_core.cache_dir(), "pch-*"))
        shutil.rmtree(d)
        _core.build_host('extern "C" int b() { return 2; }\\n', [], ["b"])
        assert os.path.exists(os.path.join(d, "nu_host_pch.h.gch"))
    """)
    env = dict(os.environ, NUMBACUDA_UFUNC_CACHE_DIR=str(tmp_path))
    env.pop("NUMBACUDA_UFUNC_DISABLE_CACHE", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]


def test_native_flag_enters_the_key(tmp_path):
    # -march=native by default, the baseline with NUMBACUDA_UFUNC_HOST_NATIVE=0: two
    # different libraries (and precompiled headers) for the same source.
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("-march=native is used on x86-64 and AArch64 only")
    run_build(tmp_path, "1.0")
    run_build(tmp_path, "1.0", {"NUMBACUDA_UFUNC_HOST_NATIVE": "0"})
    assert len([p for p in tmp_path.iterdir() if p.suffix == ".nuc"]) == 2
    assert len(pch_dirs(tmp_path)) == 2
    run_build(tmp_path, "1.0", {"NUMBACUDA_UFUNC_HOST_NATIVE": "1"})  # = the default
    assert len([p for p in tmp_path.iterdir() if p.suffix == ".nuc"]) == 2


# ---- build flags of the emulated cuda target, and which precompiled headers a build makes

FLAGS_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from numbacuda_ufunc import cuda, guvectorize, vectorize

    target = sys.argv[1]

    @vectorize(["float64(float64, float64)"], target=target)
    def add(a, b):
        return a + b

    @guvectorize(["void(float64[:], float64[:])"], "(n)->()", target=target)
    def total(a, out):
        s = 0.0
        for x in a:
            s += x
        out[0] = s

    x = np.arange(5.0)
    assert add(x, x).tolist() == (2 * x).tolist()
    assert total(x) == 10.0
    if target == "cuda":
        @cuda.jit
        def inc(a):
            a[cuda.grid(1)] += 1.0
        inc[1, 5](x)
        assert x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
""")

# Runs the compiler given to it, after writing its arguments (one build per line) to a log.
LOGGING_CXX = textwrap.dedent("""\
    #!/bin/sh
    echo "$*" >> "$NU_TEST_CXX_LOG"
    exec c++ "$@"
""")


def builds_of(tmp_path, target):
    cxx = tmp_path / "cxx.sh"
    cxx.write_text(LOGGING_CXX)
    cxx.chmod(0o755)
    log = tmp_path / f"cxx-{target}.log"
    cache = tmp_path / f"cache-{target}"
    env = dict(os.environ, NUMBACUDA_UFUNC_CACHE_DIR=str(cache), CXX=str(cxx),
               NU_TEST_CXX_LOG=str(log))
    env.pop("NUMBACUDA_UFUNC_DISABLE_CACHE", None)
    out = subprocess.run([sys.executable, "-c", FLAGS_SCRIPT, target], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = log.read_text().splitlines()
    kernels = [ln.split() for ln in lines if "nu_module.cpp" in ln]
    headers = [ln for ln in lines if "c++-header" in ln]
    return kernels, headers, cache


@pytest.mark.emulation
def test_emulated_cuda_target_builds_at_O1_and_cpu_at_O3(tmp_path):
    # Emulation runs code meant for a GPU (build time is what it waits on): -O1 for every
    # kernel kind of the cuda target; the cpu target keeps -O3 (vectorised loops).
    kernels, headers, cache = builds_of(tmp_path, "cuda")
    assert len(kernels) == 3  # the ufunc, the gufunc and the @cuda.jit kernel
    # the later -O wins
    assert all("-O1" in args and args.index("-O1") > args.index("-O3") for args in kernels), \
        kernels
    # each variant of the precompiled header was built when first needed, once
    assert len(headers) == 2 and len(list(cache.glob("pch-*"))) == 2, headers
    kernels, headers, cache = builds_of(tmp_path, "cpu")
    assert len(kernels) == 2
    assert all("-O1" not in args and "-O3" in args for args in kernels), kernels
    # a cpu target never needs the bounds-checked variant (no @cuda.jit kernel, no checks)
    assert len(headers) == 1 and "nu_host_pch.h.gch" in headers[0], headers
    (pch,) = cache.glob("pch-*")
    assert sorted(p.name for p in pch.glob("*.gch")) == ["nu_host_pch.h.gch"]


def test_include_directories_do_not_make_a_new_precompiled_header(tmp_path):
    # A linked .cu file's directory comes as -I<dir>: kernels differing only there share
    # the precompiled header (and still see their own directory's headers).
    script = textwrap.dedent("""
        import os, sys
        from numbacuda_ufunc import _core
        for k in range(3):
            d = os.path.join(sys.argv[1], "inc%d" % k)
            os.makedirs(d)
            with open(os.path.join(d, "nu_test_value.h"), "w") as f:
                f.write("#define NU_TEST_VALUE %d\\n" % (k + 40))
            src = ('#include "nu_test_value.h"\\n'
                   'extern "C" int v%d() { return NU_TEST_VALUE; }\\n' % k)
            lib = _core.build_host(src, ["-I" + d], ["v%d" % k])
            import ctypes
            f = ctypes.CFUNCTYPE(ctypes.c_int)(lib.symbol("v%d" % k))
            assert f() == k + 40, f()
    """)
    cache = tmp_path / "cache"
    env = dict(os.environ, NUMBACUDA_UFUNC_CACHE_DIR=str(cache))
    env.pop("NUMBACUDA_UFUNC_DISABLE_CACHE", None)
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert len(pch_dirs(cache)) == 1




# A daemon thread is inside engine work (GIL released) when the main thread ends, and comes
# back the moment the interpreter starts finalizing.
DAEMON_AT_EXIT = textwrap.dedent("""
    import sys, threading
    from numbacuda_ufunc import _core

    started = threading.Event()

    def engine_work():
        started.set()
        _core._wait_without_gil(60.0, sys.argv[1] == "compile")

    threading.Thread(target=engine_work, daemon=True).start()
    started.wait(60)
""")


# A daemon thread calling a parallel ufunc in a loop (the GIL released in each call) while
# the main thread ends: the ufunc's own call path (its tp_call swallowed pthread_exit's
# forced unwind in a catch (...): "FATAL: exception not rethrown", an abort).
DAEMON_UFUNC_AT_EXIT = textwrap.dedent("""
    import threading
    import numpy as np
    import numbacuda_ufunc as nu

    f = nu.vectorize(["float64(float64)"], target="parallel")(lambda v: v * 2.5 + 1.0)
    x = np.arange(1 << 20, dtype=np.float64)
    f(x)
    started = threading.Event()

    def work():
        started.set()
        while True:
            f(x)

    threading.Thread(target=work, daemon=True).start()
    started.wait(60)
""")


@pytest.mark.parametrize("how", ["compile", "launch", "ufunc"])
def test_process_exits_cleanly_while_a_daemon_thread_is_in_engine_work(how):
    # Such a thread used to be ended by pthread_exit through a noexcept destructor: abort,
    # status 134 (issue 35); a compile (blocking_section) and a launch or copy (the bindings'
    # GIL release) are the two ways engine work releases the GIL. Dask workers and Jupyter
    # kernels run such threads. Three runs each: the thread's return races the teardown.
    script = DAEMON_UFUNC_AT_EXIT if how == "ufunc" else DAEMON_AT_EXIT
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", script, how], capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
