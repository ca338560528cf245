"""Differential fuzzer: random functions over the subset (mixed bool/int/uint/float/complex
arguments, branches, loops, break/continue, math calls, casts, and/or, chained
comparisons), compiled by NVRTC to PTX and run on the host backend, compared element by
element with the Python function on NumPy scalars, edge values included (NaN, +-inf,
-0.0, integer limits, zero divisors). ``--fuzz-count N`` runs more (default 2000)."""

import importlib.util
import math
import random

import numpy as np
import pytest

import _fuzzgen
import _hostrun as hr
from numbacuda_ufunc.errors import CompileError

BATCH = 200  # functions per translation unit (g++ and NVRTC cost ~1 s per unit)
N_INPUTS = 40


def pytest_generate_tests(metafunc):
    if "fuzz_batch" in metafunc.fixturenames:
        n = metafunc.config.getoption("--fuzz-count")
        metafunc.parametrize("fuzz_batch", range(math.ceil(n / BATCH)))


def _inputs(t, rng):
    edges = hr.edge_values(t)
    if t.kind == "b":
        return rng.integers(0, 2, N_INPUTS).astype(bool)
    if t.kind in "iu":
        info = np.iinfo(t.dtype)
        small = rng.integers(max(info.min, -20), min(info.max, 20), N_INPUTS, endpoint=True)
        vals = small.astype(t.dtype)
    elif t.kind == "f":
        vals = (rng.standard_normal(N_INPUTS) * 10).astype(t.dtype)
    else:
        vals = (rng.standard_normal(N_INPUTS) * 5 + 1j * rng.standard_normal(N_INPUTS) * 5
                ).astype(t.dtype)
    pick = rng.random(N_INPUTS) < 0.3
    vals[pick] = rng.choice(edges, pick.sum())
    return vals


def test_fuzz_translator(request, tmp_path_factory, fuzz_batch):
    count = request.config.getoption("--fuzz-count")
    seed = request.config.getoption("--fuzz-seed") + fuzz_batch
    n = min(BATCH, count - fuzz_batch * BATCH)
    rng = random.Random(seed)
    gen = _fuzzgen.Gen(rng)
    texts, types = [], []
    for i in range(n):
        text, ts = gen.function(f"fz_{fuzz_batch}_{i}", rng.randint(1, 3))
        texts.append(text)
        types.append(ts)
    path = tmp_path_factory.mktemp("fuzz") / f"fuzz_{fuzz_batch}.py"
    path.write_text("import math\nimport numpy as np\n\n\n" + "\n\n".join(texts))
    spec = importlib.util.spec_from_file_location(f"fuzz_{fuzz_batch}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    cases, rejected = [], []
    for i, ts in enumerate(types):
        fn = getattr(mod, f"fz_{fuzz_batch}_{i}")
        try:
            cases.append(hr.Case(fn, ts))
        except CompileError as exc:
            rejected.append(f"{texts[i]}{ts}: {exc}")
    # The generator stays inside the subset; a rejection is a translator gap to look at.
    assert len(rejected) <= n // 50, "\n\n".join(rejected[:5])

    hr.build(cases, nvrtc=True, host_options=["-O1"])
    nprng = np.random.default_rng(seed)
    failures, defined = [], 0
    for case in cases:
        arrays = [_inputs(t, nprng) for t in case.arg_types]
        try:
            defined += hr.check(case, *arrays, min_defined=0)
        except AssertionError as exc:
            failures.append(f"{exc}\n(seed {seed}, module {path})")
    assert not failures, f"{len(failures)} of {len(cases)} functions differ:\n\n" + \
        "\n\n".join(failures[:3])
    # Enough of the inputs must be defined for the comparison to mean something.
    assert defined >= 0.5 * len(cases) * N_INPUTS, defined
