import time, numpy as np, cupy as cp
from cupy.cuda import runtime as rt
n = 1 << 26
a = np.random.default_rng(0).random(n, np.float32)
d = cp.empty(n, cp.float32)
def t(fn, reps=5):
    ts = []
    for _ in range(reps):
        cp.cuda.Device().synchronize(); s = time.perf_counter(); fn(); cp.cuda.Device().synchronize(); ts.append((time.perf_counter() - s) * 1e3)
    return sorted(ts)[len(ts)//2]
def reg_cycle(arr):
    rt.hostRegister(arr.ctypes.data, arr.nbytes, 0); rt.hostUnregister(arr.ctypes.data)
print("register+unregister existing 256MiB", t(lambda: reg_cycle(a)))
def fresh_reg():
    x = np.empty(n, np.float32); rt.hostRegister(x.ctypes.data, x.nbytes, 0); rt.hostUnregister(x.ctypes.data)
print("register+unregister fresh 256MiB", t(fresh_reg))
def h2d_reg():
    rt.hostRegister(a.ctypes.data, a.nbytes, 0); rt.memcpy(d.data.ptr, a.ctypes.data, a.nbytes, rt.memcpyHostToDevice); rt.hostUnregister(a.ctypes.data)
print("register + h2d + unregister existing", t(h2d_reg))
def d2h_fresh_reg():
    x = np.empty(n, np.float32); rt.hostRegister(x.ctypes.data, x.nbytes, 0); rt.memcpy(x.ctypes.data, d.data.ptr, x.nbytes, rt.memcpyDeviceToHost); rt.hostUnregister(x.ctypes.data)
print("fresh + register + d2h + unregister", t(d2h_fresh_reg))
def touch_fresh():
    x = np.empty(n, np.float32); x[::1024] = 0
print("fresh + touch every page", t(touch_fresh))
