"""Compare host C++ compilers for the cpu target (issue 28: is the `ziglang` wheel a usable
fallback where the system has no compiler?). For each compiler command, in a fresh process
with an empty kernel cache: the first call of two cpu-target ufuncs (translate + build +
run) and the best of 7 later calls on 4M float64 elements.

    python scripts/host_compiler_compare.py "g++" "/path/to/python -m ziglang c++"
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

CHILD = textwrap.dedent("""
    import json, math, time
    import numpy as np
    import numbacuda_ufunc as nu

    def poly(x, y):
        return x * x * 0.5 - 3.0 * y + 1.25

    def trig(x, y):
        return math.sin(x) * math.exp(-y * y) + math.sqrt(abs(x) + 1.0)

    x = np.random.default_rng(0).random(4_000_000)
    y = np.random.default_rng(1).random(4_000_000)
    out = {}
    for fn in (poly, trig):
        f = nu.vectorize(["float64(float64, float64)"], target="cpu")(fn)
        t0 = time.perf_counter()
        r = f(x, y)
        first = time.perf_counter() - t0
        times = []
        for _ in range(7):
            t = time.perf_counter()
            f(x, y)
            times.append(time.perf_counter() - t)
        steady = min(times)
        expect = np.array([fn(a, b) for a, b in zip(x[:1000], y[:1000])])
        assert np.allclose(r[:1000], expect), fn.__name__
        out[fn.__name__] = {"first_call_s": first, "steady_ms": steady * 1e3}
    print(json.dumps(out))
""")


def measure(cxx: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CXX": cxx, "NUMBACUDA_UFUNC_ENABLE_CUDASIM": "1",
               "NUMBACUDA_UFUNC_CACHE_DIR": cache, "NUMBACUDA_UFUNC_NVRTC_CHECK": "0"}
        script = os.path.join(cache, "child.py")
        with open(script, "w") as f:
            f.write(CHILD)
        done = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            return {"error": done.stderr[-2000:]}
        return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    for cxx in sys.argv[1:]:
        print(cxx, json.dumps(measure(cxx)))
