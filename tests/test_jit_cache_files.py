"""``cuda.jit(cache=True)``: Numba's per-function cache files (numbacuda_ufunc/toolchain/_jit_cache.py).

Each test writes a module under tmp_path and runs it in fresh processes, as Numba's own
caching tests do: the first process translates and saves, the next one loads (stats count
hits, the translator is never called, and the engine's kernel cache serves the binary so
nothing is compiled). The Python arithmetic of each kernel is the oracle for its result.
"""

import json
import linecache
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from numbacuda_ufunc import cuda

MODULE = textwrap.dedent('''
    import numpy as np
    from numbacuda_ufunc import cuda

    Z = 1


    @cuda.jit(cache=True)
    def add(r, x, y):
        r[()] = x[()] + y[()] + Z


    def make_closure(v):
        @cuda.jit(cache=True)
        def closure(r, y):
            r[()] = v + y[()]
        return closure


    closures = [make_closure(v) for v in (3, 5, 7)]


    @cuda.jit(device=True, cache=True)
    def inner(a, b):
        return a * b + Z


    @cuda.jit(cache=True)
    def outer(r, x):
        r[()] = inner(x[()], x[()])


    @cuda.jit(cache=False)
    def plain(r, x):
        r[()] = x[()] + Z


    @cuda.jit
    def twice(x):  # a kernel called as a device function
        return x * 2


    @cuda.jit(cache=True)
    def calls_twice(r, x):
        r[()] = twice(x[()])


    @cuda.jit("void(float64[::1], float64)", cache=True)
    def scale(a, s):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * s + Z


    def membership(x):  # a frozenset constant: its order follows the hash seed
        return x in {"alpha", "beta", "gamma", "delta", "epsilon"}


    def call(k, *args):
        arrs = [np.asarray(a) for a in args]
        r = np.full((), -999, dtype=arrs[0].dtype)  # poisoned: an unwritten result shows
        k[1, 1](r, *arrs)
        return r[()].item()
''')

PRELUDE = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {path!r})
    import numpy as np
    from numbacuda_ufunc import _core, cuda
    import numbacuda_ufunc.kernels.kernel as _kernel_module

    if {forbid_translation!r}:
        def _no_translation(*a, **k):
            raise AssertionError("the translator ran")
        _kernel_module.translate_kernel = _no_translation

    import kmod

    def hm(k):
        return [sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())]

    out = {{}}
''')

EPILOGUE = textwrap.dedent('''
    s = _core.cache_stats()
    out["compiles"] = s["host_compiles"] + s["nvrtc_compiles"]
    print("RESULT" + json.dumps(out))
''')


@pytest.fixture
def mod(tmp_path):
    """The module's folder, with the module written and an engine cache of its own."""
    (tmp_path / "kmod.py").write_text(MODULE)
    return tmp_path


def run(folder, body, forbid_translation=False, env=None, expect_ok=True):
    parts = (body,) if isinstance(body, str) else body  # each dedented on its own
    code = (PRELUDE.format(path=str(folder), forbid_translation=forbid_translation)
            + "".join(textwrap.dedent(b).strip("\n") + "\n" for b in parts) + EPILOGUE)
    e = dict(os.environ, NUMBACUDA_UFUNC_ENABLE_CUDASIM="1",
             NUMBACUDA_UFUNC_CACHE_DIR=str(folder / "engine_cache"),
             NUMBACUDA_UFUNC_CUDA_LOW_OCCUPANCY_WARNINGS="0",
             NUMBACUDA_UFUNC_CUDA_WARN_ON_IMPLICIT_COPY="0")
    for name in ("NUMBACUDA_UFUNC_DISABLE_CACHE", "NUMBA_CACHE_DIR"):
        e.pop(name, None)
    e.update(env or {})
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=e, timeout=300, cwd=str(folder))
    if not expect_ok:
        return proc
    assert proc.returncode == 0, proc.stderr
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT"):])


def add_file(pycache, suffix):
    """kmod.add's cache file ending in ``suffix`` (kmod.call's files sit beside it, in an
    order that depends on the names, so on the Python version)."""
    return next(p for p in pycache.iterdir() if p.name.startswith("kmod.add-")
                and p.name.endswith(suffix))


def files(folder, prefix=""):
    """The cache files in ``folder`` (not Python's .pyc), of names starting ``prefix``."""
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    return [n for n in names if not n.endswith(".pyc") and n.startswith(prefix)]


ADD_TWICE = '''
    out["r"] = [kmod.call(kmod.add, 2, 3), kmod.call(kmod.add, 2.5, 3)]
    out["add"] = hm(kmod.add)
'''


def test_jit_cache_second_process_loads_without_translating_or_compiling(mod):
    first = run(mod, ADD_TWICE)
    assert first["r"] == [2 + 3 + 1, 2.5 + 3 + 1]
    assert first["add"] == [0, 2]
    assert first["compiles"] >= 1
    pycache = mod / "__pycache__"
    # Numba's names (its suffixes .nbi/.nbc are ours as .nui/.nuc): module.qualname-line,
    # the line of the decorator (co_firstlineno)
    major, minor = sys.version_info[:2]
    base = f"kmod.add-8.py{major}{minor}{getattr(sys, 'abiflags', '')}"
    assert files(pycache, prefix="kmod.add") == [
        base + ".1.nuc", base + ".2.nuc", base + ".nui"]
    mtimes = {n: os.stat(pycache / n).st_mtime_ns for n in files(pycache)}

    second = run(mod, ADD_TWICE, forbid_translation=True)
    assert second["r"] == first["r"]
    assert second["add"] == [2, 0]
    assert second["compiles"] == 0  # the engine's kernel cache has the binaries
    # a hit writes nothing
    assert {n: os.stat(pycache / n).st_mtime_ns for n in files(pycache)} == mtimes


def test_jit_cache_guard_catches_a_translation(mod):
    # the guard the hit tests rely on: on a cold cache the translator must run, and fails
    proc = run(mod, ADD_TWICE, forbid_translation=True, expect_ok=False)
    assert proc.returncode != 0 and "the translator ran" in proc.stderr


def test_jit_cache_stats_in_process(mod):
    out = run(mod, '''
        kmod.call(kmod.add, 2, 3)
        kmod.call(kmod.add, 4, 5)      # same types: no new specialization
        st = kmod.add.stats
        out["path"] = st.cache_path
        out["misses"] = {str(k): v for k, v in st.cache_misses.items()}
        out["plain_path"] = kmod.plain.stats.cache_path
        kmod.call(kmod.plain, 1)
        out["plain"] = hm(kmod.plain)
    ''')
    assert out["path"] == str(mod / "__pycache__")
    assert out["misses"] == {"(int64[], int64[], int64[])": 1}
    assert out["plain_path"] is None
    assert out["plain"] == [0, 1]  # a miss is any translation, cached or not (Numba)
    assert files(mod / "__pycache__", prefix="kmod.plain") == []


def test_jit_cache_source_change_invalidates(mod):
    run(mod, ADD_TWICE)
    with open(mod / "kmod.py", "a") as f:
        f.write("\nZ = 10\n")
    out = run(mod, ADD_TWICE)
    assert out["r"] == [2 + 3 + 10, 2.5 + 3 + 10]
    assert out["add"] == [0, 2]
    # the stale data files are overwritten, not accumulated
    assert len(files(mod / "__pycache__", prefix="kmod.add")) == 3
    again = run(mod, ADD_TWICE, forbid_translation=True)
    assert again["r"] == out["r"] and again["add"] == [2, 0]


def test_jit_cache_globals_frozen_until_recompile(mod):
    run(mod, '''out["r"] = kmod.call(kmod.add, 2, 3)''')
    stale = run(mod, '''
        kmod.Z = 10
        out["before"] = kmod.call(kmod.add, 2, 3)    # loaded: Z as it was (Numba)
        kmod.add.recompile()
        out["after"] = kmod.call(kmod.add, 2, 3)
        out["add"] = hm(kmod.add)
    ''')
    assert stale["before"] == 2 + 3 + 1
    assert stale["after"] == 2 + 3 + 10
    assert stale["add"] == [1, 1]
    # the recompiled translation replaced the cached one
    fresh = run(mod, '''out["r"] = kmod.call(kmod.add, 2, 3); out["add"] = hm(kmod.add)''')
    assert fresh["r"] == 2 + 3 + 10 and fresh["add"] == [1, 0]


def test_jit_recompile_without_cache_reads_globals_again(mod):
    out = run(mod, '''
        out["a"] = kmod.call(kmod.plain, 5)
        kmod.Z = 7
        out["b"] = kmod.call(kmod.plain, 5)          # compiled already: unchanged
        kmod.plain.recompile()
        out["c"] = kmod.call(kmod.plain, 5)
        a = np.arange(4.0)
        kmod.scale[1, 4](a, 2.0)
        kmod.Z = 100
        kmod.scale.recompile()
        b = np.arange(4.0)
        kmod.scale[1, 4](b, 2.0)
        out["scale"] = [a.tolist(), b.tolist()]
    ''')
    assert [out["a"], out["b"], out["c"]] == [6, 6, 12]
    assert out["scale"] == [[x * 2.0 + 1 for x in range(4)], [x * 2.0 + 100 for x in range(4)]]


def test_jit_cache_closures_share_one_index(mod):
    body = '''
        out["r"] = [kmod.call(c, 10) for c in kmod.closures]
        out["hm"] = [hm(c) for c in kmod.closures]
    '''
    first = run(mod, body)
    assert first["r"] == [13, 15, 17]
    assert first["hm"] == [[0, 1]] * 3
    names = [n for n in files(mod / "__pycache__") if "closure" in n]
    assert len([n for n in names if n.endswith(".nui")]) == 1
    assert len([n for n in names if n.endswith(".nuc")]) == 3
    second = run(mod, body, forbid_translation=True)
    assert second["r"] == [13, 15, 17]  # each closure value gets its own entry
    assert second["hm"] == [[1, 0]] * 3


def test_jit_cache_device_function_is_cached_in_its_callers(mod):
    body = '''
        out["r"] = kmod.call(kmod.outer, 3)
        out["outer"] = hm(kmod.outer)
        out["inner"] = hm(kmod.inner)
        out["inner_path"] = kmod.inner.stats.cache_path
    '''
    first = run(mod, body)
    assert first["r"] == 3 * 3 + 1 and first["outer"] == [0, 1]
    assert first["inner"] == [0, 0]  # as in Numba: compiled into each calling kernel
    assert first["inner_path"] == str(mod / "__pycache__")
    second = run(mod, body, forbid_translation=True)
    assert second["r"] == 10 and second["outer"] == [1, 0]


def test_jit_cache_eager_signature_is_cached(mod):
    body = '''
        a = np.arange(5.0)
        kmod.scale[1, 8](a, 3.0)
        out["a"] = a.tolist()
        out["scale"] = hm(kmod.scale)
    '''
    first = run(mod, body)
    assert first["a"] == [x * 3.0 + 1 for x in range(5)] and first["scale"] == [0, 1]
    second = run(mod, body, forbid_translation=True)
    assert second["a"] == first["a"] and second["scale"] == [1, 0]


def test_jit_cache_numba_cache_dir_redirects(mod, tmp_path):
    where = tmp_path / "numba_dir"
    out = run(mod, ('''out["path"] = kmod.add.stats.cache_path''', ADD_TWICE),
              env={"NUMBA_CACHE_DIR": str(where)})
    assert out["path"].startswith(str(where))
    assert len(files(out["path"], prefix="kmod.add")) == 3
    assert files(mod / "__pycache__") == []
    again = run(mod, ADD_TWICE, env={"NUMBA_CACHE_DIR": str(where)}, forbid_translation=True)
    assert again["add"] == [2, 0]


def test_jit_cache_unwritable_pycache_falls_back_to_engine_cache(mod):
    # A file where __pycache__ would be: the folder cannot be made (as a read-only
    # folder, which root could still write to).
    (mod / "__pycache__").write_text("not a folder")
    body = ('''out["path"] = kmod.add.stats.cache_path''', ADD_TWICE)
    first = run(mod, body)
    assert first["path"].startswith(str(mod / "engine_cache" / "jit"))
    assert len(files(first["path"], prefix="kmod.add")) == 3
    second = run(mod, body, forbid_translation=True)
    assert second["add"] == [2, 0] and second["r"] == [6, 6.5]


def test_jit_cache_disable_cache_writes_nothing(mod):
    out = run(mod, ('''out["path"] = kmod.add.stats.cache_path''', ADD_TWICE),
              env={"NUMBACUDA_UFUNC_DISABLE_CACHE": "1"})
    assert out["path"] is None and out["add"] == [0, 2] and out["r"] == [6, 6.5]
    assert files(mod / "__pycache__") == []


def _damage_truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _damage_flip(path):
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))


def _damage_garbage(path):
    path.write_bytes(b"\x80\x04garbage" * 10)


def _damage_empty(path):
    path.write_bytes(b"")


def _damage_fifo(path):
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize("damage", [_damage_truncate, _damage_flip, _damage_garbage,
                                    _damage_empty, _damage_fifo])
@pytest.mark.parametrize("which", ["nui", "1.nuc"])
def test_jit_cache_damaged_file_is_ignored_and_rebuilt(mod, damage, which):
    run(mod, ADD_TWICE)
    target = add_file(mod / "__pycache__", "." + which)
    damage(target)
    out = run(mod, ADD_TWICE)
    assert out["r"] == [6, 6.5]
    # a damaged index loses both entries; a damaged data file only its own
    assert out["add"] == ([0, 2] if which == "nui" else [1, 1])
    again = run(mod, ADD_TWICE, forbid_translation=True)
    assert again["add"] == [2, 0] and again["r"] == [6, 6.5]


def test_jit_cache_data_file_of_another_key_is_refused(mod):
    run(mod, ADD_TWICE)
    pycache = mod / "__pycache__"
    one, two = add_file(pycache, ".1.nuc"), add_file(pycache, ".2.nuc")
    two.write_bytes(one.read_bytes())  # intact, but the int64 entry in the float64 slot
    out = run(mod, ADD_TWICE)
    assert out["r"] == [6, 6.5] and out["add"] == [1, 1]


def test_jit_cache_key_is_the_same_in_every_process(mod):
    body = '''
        from numbacuda_ufunc.toolchain._jit_cache import FunctionCache
        from numbacuda_ufunc import float64
        out["key"] = FunctionCache(kmod.membership, "test").key((float64,))
        out["order"] = list(kmod.membership.__code__.co_consts[-1])
    '''
    seeds = [run(mod, body, env={"PYTHONHASHSEED": str(seed)}) for seed in (1, 2, 3, 4)]
    assert len({tuple(s["order"]) for s in seeds}) > 1  # the frozenset's order did change
    assert len({s["key"] for s in seeds}) == 1


def test_jit_cache_other_translator_misses(mod):
    run(mod, ADD_TWICE)
    out = run(mod, ('''
        import numbacuda_ufunc.toolchain._jit_cache as jc
        jc._fingerprint = b"another version of the translator"
    ''', ADD_TWICE))
    assert out["add"] == [0, 2] and out["r"] == [6, 6.5]


def test_jit_cache_refuses_closure_device_array():
    captured = cuda.to_device(np.arange(3.0))

    @cuda.jit(cache=True)
    def k(out_):
        i = cuda.grid(1)
        if i < out_.size:
            out_[i] = captured[i] * 2.0

    out = cuda.device_array(3)
    with pytest.raises(pickle.PicklingError, match="global device arrays"):
        k[1, 3](out)
    with pytest.raises(pickle.PicklingError, match="global device arrays"):
        k.compile("void(float64[::1])")
    # refused before anything is translated or saved: the kernel has no specialization
    assert k.signatures == [] and sum(k.stats.cache_hits.values()) == 0


GLOBAL_ARRAY_MODULE = textwrap.dedent('''
    import numpy as np
    from numbacuda_ufunc import cuda

    G = cuda.to_device(np.arange(3.0))


    @cuda.jit(cache=True)
    def k(out_):
        i = cuda.grid(1)
        if i < out_.size:
            out_[i] = G[i] * 2.0
''')


def test_jit_cache_refuses_global_device_array(tmp_path):
    (tmp_path / "gmod.py").write_text(GLOBAL_ARRAY_MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import gmod
        out = cuda.device_array(3)
        with pytest.raises(pickle.PicklingError, match="global device arrays"):
            gmod.k[1, 3](out)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("gmod", None)
    assert files(tmp_path / "__pycache__", prefix="gmod.k") == []


def test_jit_cache_refuses_link_files(tmp_path):
    cu = tmp_path / "extra.cu"
    cu.write_text('extern "C" __device__ int f(int* r, int x) { *r = x; return 0; }\n')
    with pytest.raises(RuntimeError, match="Cannot pickle CUDACodeLibrary with linking files"):
        @cuda.jit("void()", cache=True, link=[str(cu)])
        def k():
            pass


def test_jit_cache_needs_a_source_file():
    namespace = {"cuda": cuda}
    exec(compile("def f(a):\n    a[0] = 1\n", "<made by exec>", "exec"), namespace)
    with pytest.raises(RuntimeError, match="no locator available for file '<made by exec>'"):
        cuda.jit(cache=True)(namespace["f"])
    with pytest.raises(RuntimeError, match="cannot cache function 'f'"):
        cuda.jit(device=True, cache=True)(namespace["f"])
    cuda.jit(cache=False)(namespace["f"])  # without cache=True it is fine


CELL = '''
    import linecache
    src = "@cuda.jit(cache=True)\\ndef cell(r, x):\\n    r[()] = x[()] * {factor}\\n"
    name = "<ipython-input-7-0123456789ab>"  # as IPython names a cell: no such file
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {{"cuda": cuda}}
    exec(compile(src, name, "exec"), ns)
    out["path"] = ns["cell"].stats.cache_path
    out["r"] = kmod.call(ns["cell"], 3)
    out["hm"] = hm(ns["cell"])
'''


def test_jit_cache_notebook_cell_is_stamped_by_its_source(mod):
    first = run(mod, CELL.format(factor=4))
    assert first["path"] == str(mod / "engine_cache" / "jit" / "interactive")
    assert first["r"] == 12 and first["hm"] == [0, 1]
    again = run(mod, CELL.format(factor=4), forbid_translation=True)
    assert again["r"] == 12 and again["hm"] == [1, 0]
    changed = run(mod, CELL.format(factor=5))  # same first lines, another body
    assert changed["r"] == 15 and changed["hm"] == [0, 1]


def test_gpus_slice_is_a_list_of_devices():
    everything = cuda.gpus[:]
    assert isinstance(everything, list) and len(everything) == len(cuda.gpus)
    assert [g.id for g in everything] == list(range(len(cuda.gpus)))
    assert cuda.gpus[1:] == [] or cuda.gpus[1:][0].id == 1
    assert cuda.gpus[len(cuda.gpus):] == []
    with pytest.raises(TypeError, match="index must be an integer"):
        cuda.gpus["0"]


def test_jit_cache_in_process_hit_after_reimport(mod):
    # Numba's test_cache_reuse: a second import of the module in the same process loads.
    sys.path.insert(0, str(mod))
    try:
        import kmod
        assert kmod.call(kmod.add, 2, 3) == 6
        assert sum(kmod.add.stats.cache_misses.values()) == 1
        sys.modules.pop("kmod")
        import kmod as again
        assert again.add is not kmod.add
        assert again.call(again.add, 2, 3) == 6
        assert sum(again.add.stats.cache_hits.values()) == 1
        assert sum(again.add.stats.cache_misses.values()) == 0
    finally:
        sys.path.remove(str(mod))
        sys.modules.pop("kmod", None)


def test_jit_cache_poisoned_result_is_written(mod):
    # the oracle check of the module's helper itself: a kernel that writes nothing shows
    sys.path.insert(0, str(mod))
    try:
        import kmod

        @cuda.jit
        def nothing(r, x):
            pass

        assert kmod.call(nothing, 1) == -999
        assert np.isclose(kmod.call(kmod.add, 0.25, 0.5), 1.75)
    finally:
        sys.path.remove(str(mod))
        sys.modules.pop("kmod", None)


FACTORY_MODULE = textwrap.dedent('''
    from numbacuda_ufunc import cuda


    def make(v):
        @cuda.jit(cache=True)
        def k(r, x):
            r[()] = x[()] * v
        return k
''')


def test_jit_cache_kernel_unpickled_without_its_source_file_runs_uncached(tmp_path):
    # A kernel made in a function pickles by value (Dask, multiprocessing); a worker without
    # its source file runs the copy uncached instead of raising. The file is removed before
    # the copy is made, as on such a worker: cloudpickle before 3.1.3 keeps the code's real
    # co_filename (3.1.3 writes "<dynamic-code>"), and with the file still there the copy
    # rightly used its cache (seen on the H100 machine's cloudpickle, 2026-11-27).
    source = tmp_path / "fmod.py"
    source.write_text(FACTORY_MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import fmod
        k = fmod.make(3)
        assert k.stats.cache_path == str(tmp_path / "__pycache__")
        payload = pickle.dumps(k)
        source.unlink()
        linecache.checkcache(str(source))
        moved = pickle.loads(payload)
        assert moved.stats.cache_path is None
        r = np.full((), -1.0)
        moved[1, 1](r, np.asarray(2.5))
        assert r[()] == 2.5 * 3
        assert sum(moved.stats.cache_misses.values()) == 1
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fmod", None)


def test_jit_cache_fingerprint_covers_the_kernel_headers(monkeypatch):
    """The kernel headers a translation calls into are embedded in _core: another build of
    them makes cached translations miss, even with the same Python sources."""
    import numbacuda_ufunc.toolchain._jit_cache as jc
    from numbacuda_ufunc import _core

    monkeypatch.setattr(jc, "_fingerprint", None)
    mine = jc._translator_fingerprint()
    digest = _core.headers_digest()
    assert len(digest) == 64
    monkeypatch.setattr(_core, "headers_digest", lambda: digest[::-1])
    monkeypatch.setattr(jc, "_fingerprint", None)
    assert jc._translator_fingerprint() != mine


def test_jit_cache_hit_still_lists_a_kernel_called_as_a_device_function(mod):
    """Numba lists a kernel's specializations made by calls from other kernels in its
    ``signatures``; a caller loaded from its files (no translation) tells the callee again."""
    body = '''
        out["r"] = kmod.call(kmod.calls_twice, 21)
        out["sigs"] = [str(t) for sig in kmod.twice.signatures for t in sig]
        out["hm"] = hm(kmod.calls_twice)
    '''
    first = run(mod, body)
    second = run(mod, body, forbid_translation=True)
    assert first["r"] == second["r"] == 42
    assert first["hm"] == [0, 1] and second["hm"] == [1, 0]
    assert first["sigs"] == second["sigs"] == ["int64"]
