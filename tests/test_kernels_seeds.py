"""The @cuda.jit examples of the seed documents (tutorials of Numba's CUDA target), run
unchanged but for ``numba`` -> ``numbacuda_ufunc``.

Each example is written to a file and run as a script (the translator reads the kernel's
source, so it must live in a file), then its results are checked against NumPy. Two
examples are wrong as published, for Numba too; for those the test checks that the
mistake is reported clearly, and runs the evident fix.
"""

import runpy
import textwrap

import numpy as np
import pytest

from numbacuda_ufunc.errors import CompileError


def run_example(tmp_path, code, name="example"):
    code = textwrap.dedent(code).replace("numba", "numbacuda_ufunc")
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    return runpy.run_path(str(path), run_name="__main__")


def test_seed_add_vectors_with_device_arrays(tmp_path, capsys):
    ns = run_example(tmp_path, """
        import numba.cuda as cuda

        @cuda.jit
        def add_vectors(a, b, result):
            i = cuda.grid(1)
            if i < len(a):
                result[i] = a[i] + b[i]

        import numpy as np

        # Create input arrays
        a = np.array([1, 2, 3])
        b = np.array([4, 5, 6])

        # Allocate GPU memory for input and output arrays
        d_a = cuda.to_device(a)
        d_b = cuda.to_device(b)
        d_result = cuda.device_array_like(a)

        # Launch kernel on the GPU
        block_size = 32
        grid_size = (len(a) + block_size - 1) // block_size
        add_vectors[grid_size, block_size](d_a, d_b, d_result)

        # Copy result from GPU memory to the host
        result = d_result.copy_to_host()

        print(result)  # Output: [5, 7, 9]
    """)
    np.testing.assert_array_equal(ns["result"], [5, 7, 9])
    assert capsys.readouterr().out.strip() == "[5 7 9]"


def test_seed_doubled_thread_indices(tmp_path):
    ns = run_example(tmp_path, """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def doubled(arr):
            x_idx = cuda.threadIdx.x
            y_idx = cuda.threadIdx.y
            arr[x_idx, y_idx] *= 2

        arr = np.random.randn(3, 3).astype(np.float32)
        before = arr.copy()
        doubled[1, (3, 3)](arr)
    """)
    np.testing.assert_array_equal(ns["arr"], ns["before"] * 2)  # copied back, as Numba does


def test_seed_doubled_auto_grid(tmp_path):
    ns = run_example(tmp_path, """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def doubled_auto_grid(arr):
            x_idx, y_idx = cuda.grid(2)
            arr[x_idx, y_idx] *= 2

        arr = np.random.randn(3, 3).astype(np.float32)
        before = arr.copy()
        doubled_auto_grid[1, (3, 3)](arr)
    """)
    np.testing.assert_array_equal(ns["arr"], ns["before"] * 2)


def test_seed_doubled_manual_copy(tmp_path):
    ns = run_example(tmp_path, """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def doubled_man_copy(arr, out):
            x_idx, y_idx = cuda.grid(2)
            out[x_idx, y_idx] = arr[x_idx, y_idx] * 2

        arr = np.random.randn(3, 3).astype(np.float32)
        out = cuda.device_array_like(arr)
        arr_gpu = cuda.to_device(arr)
        doubled_man_copy[1, (3, 3)](arr_gpu, out)
        out = out.copy_to_host()
    """)
    np.testing.assert_array_equal(ns["out"], ns["arr"] * 2)


def test_seed_gpu_add_host_arrays(tmp_path, capsys):
    ns = run_example(tmp_path, """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def gpu_add(x, y, out):
            idx = cuda.grid(1)
            out[idx] = x[idx] + y[idx]

        n = 1024
        x = np.arange(n, dtype=np.float32)
        y = np.arange(n, dtype=np.float32)
        out = np.empty_like(x)

        threadsperblock = 128
        blockspergrid = (n + (threadsperblock - 1)) // threadsperblock

        gpu_add[blockspergrid, threadsperblock](x,y,out)

        print(f"First 5 elements of output: {out[:5]}")
    """)
    np.testing.assert_array_equal(ns["out"], 2 * np.arange(1024, dtype=np.float32))
    assert "First 5 elements of output: [0. 2. 4. 6. 8.]" in capsys.readouterr().out


MATMUL = """
    import numpy as np
    from numba import cuda

    @cuda.jit
    def gpu_matmul(A, B, C):
      row = cuda.grid(0)
      col = cuda.grid(1)

      if row < C.shape[0] and col < C.shape[1]:
        tmp_sum = 0.0
        for k in range(A.shape[1]):
          tmp_sum += A[row,k] * B[k,col]
        C[row, col] = tmp_sum

    n = 256
    A = np.random.rand(n, n).astype(np.float32)
    B = np.random.rand(n, n).astype(np.float32)
    C = np.empty((n,n), dtype=np.float32)

    threadsperblock = (16,16)
    blockspergrid_x = (C.shape[0] + (threadsperblock[0] - 1)) // threadsperblock[0]
    blockspergrid_y = (C.shape[1] + (threadsperblock[1] - 1)) // threadsperblock[1]

    blockspergrid = (blockspergrid_x, blockspergrid_y)
    gpu_matmul[blockspergrid,threadsperblock](A,B,C)

    print(f"Top left 2x2 of result: \\n{C[:2,:2]}")
"""


def test_seed_matmul_as_published_reports_grid_0(tmp_path):
    # cuda.grid(0) is not a thing (Numba: "argument can only be 1, 2, 3"); we say so, with
    # the line and the fix.
    with pytest.raises(CompileError, match=r"ndim must be the constant 1, 2 or 3 \(got 0\).*"
                                           r"row, col = cuda.grid\(2\)") as info:
        run_example(tmp_path, MATMUL)
    assert "row = cuda.grid(0)" in str(info.value)


def test_seed_matmul_with_2d_grid(tmp_path):
    fixed = MATMUL.replace("row = cuda.grid(0)\n      col = cuda.grid(1)",
                           "row, col = cuda.grid(2)").replace("n = 256", "n = 64")
    ns = run_example(tmp_path, fixed)
    np.testing.assert_allclose(ns["C"], ns["A"] @ ns["B"], rtol=1e-4)


def test_seed_reduction_with_gridsize_and_atomic_add(tmp_path, capsys):
    ns = run_example(tmp_path, """
        import numpy as np
        from numba import cuda

        @cuda.jit
        def gpu_reduce(in_array, out_array):
            thread_id = cuda.grid(1)
            stride = cuda.gridsize(1)

            temp_sum = 0.0
            for i in range(thread_id, in_array.shape[0], stride):
                temp_sum += in_array[i]

            cuda.atomic.add(out_array, 0, temp_sum)

        n = 1024
        in_array = np.arange(n, dtype=np.float32)
        out_array = np.zeros(1, dtype=np.float32)


        threadsperblock = 256
        blockspergrid = (n + (threadsperblock - 1)) // threadsperblock
        gpu_reduce[blockspergrid, threadsperblock](in_array, out_array)


        print(f"Sum of array elements: {out_array[0]}")
    """)
    assert ns["out_array"][0] == 523776.0
    assert "Sum of array elements: 523776.0" in capsys.readouterr().out


FOO = """
    import numpy as np
    from numba import cuda

    @cuda.jit
    def foo(input_array, output_array):
        # Thread id in a 1D block
        thread_id = cuda.threadIdx.x
        # Block id in a 1D grid
        block_id = cuda.blockIdx.x
        # Block width, i.e. number of threads per block
        block_width = cuda.blockDim.x
        # Compute flattened index inside the array
        i = thread_id + block_id * block_width
        if i < an_array.size: # Check array boundaries
            output_array[i] = input_array[i]

    input = np.asarray(range(10))
    output = np.zeros(len(input))

    block_threads = 32
    grid_blocks = (input.size + (block_threads - 1)) // block_threads

    foo[grid_blocks, block_threads](input, output)
"""


def test_seed_foo_as_published_names_the_undefined_global(tmp_path):
    # The tutorial's kernel reads `an_array`, which it never defines (Numba fails too).
    with pytest.raises(CompileError, match="name 'an_array' is not defined") as info:
        run_example(tmp_path, FOO)
    assert "if i < an_array.size" in str(info.value)


def test_seed_foo_with_a_global_array(tmp_path):
    # With `an_array` defined as a global, Numba freezes it into the kernel as a constant
    # array; so do we.
    fixed = FOO.replace("input = np.asarray(range(10))",
                        "input = np.asarray(range(10))\n    an_array = input")
    ns = run_example(tmp_path, fixed)
    np.testing.assert_array_equal(ns["output"], np.arange(10.0))


def test_seed_foo_with_cuda_grid(tmp_path):
    ns = run_example(tmp_path, """
        import numpy as np
        from numba import cuda

        input = np.asarray(range(10))
        output = np.zeros(len(input))

        @cuda.jit
        def foo(input_array, output_array):
            i = cuda.grid(1)
            output_array[i] = input_array[i]

        foo[1, len(input)](input, output)
        cuda.synchronize()
    """)
    np.testing.assert_array_equal(ns["output"], np.arange(10.0))


def test_seed_increment_by_one(tmp_path, capsys):
    ns = run_example(tmp_path, """
        from numba import cuda
        import numpy as np
        import math

        @cuda.jit
        def increment_by_one(an_array):
            pos = cuda.grid(1)
            if pos < an_array.size:
                an_array[pos] += 1

        my_array = np.array([3, 5, 9, 13, 7, 2, 4, 1])

        threadsperblock = 4
        blockspergrid = math.ceil(my_array.size / threadsperblock)
        increment_by_one[blockspergrid, threadsperblock](my_array)

        print(threadsperblock)
        print(blockspergrid)
        print(my_array)
    """)
    np.testing.assert_array_equal(ns["my_array"], [4, 6, 10, 14, 8, 3, 5, 2])
    assert capsys.readouterr().out.split("\n")[:3] == ["4", "2", "[ 4  6 10 14  8  3  5  2]"]


def test_seed_kernel_on_cupy_arrays(tmp_path):
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CuPy installed but no usable GPU
        pytest.skip(f"CuPy cannot reach a GPU: {exc}")
    ns = run_example(tmp_path, """
        import cupy
        from numba import cuda

        @cuda.jit
        def foo(input_array, output_array):
            i = cuda.grid(1)
            output_array[i] = input_array[i]

        input = cupy.asarray(range(10))
        output = cupy.zeros(len(input))
        foo[1, len(input)](input, output)
        result = output.get()
    """)
    np.testing.assert_array_equal(ns["result"], np.arange(10.0))


def test_numba_docs_cpu_gpu_compatible_jit_function(tmp_path):
    # Numba's documentation, "JIT Function CPU-GPU Compatibility", unchanged.
    ns = run_example(tmp_path, """
        import numpy as np
        from math import pi

        import numba
        from numba import cuda

        @numba.jit
        def business_logic(x, y, z):
            return 4 * z * (2 * x - (4 * y) / 2 * pi)

        # Test data on the CPU
        print(business_logic(1, 2, 3))  # -126.79644737231007

        X = cuda.to_device([1, 10, 234])
        Y = cuda.to_device([2, 2, 4014])
        Z = cuda.to_device([3, 14, 2211])
        results = cuda.to_device([0.0, 0.0, 0.0])

        @cuda.jit
        def f(res, xarr, yarr, zarr):
            tid = cuda.grid(1)
            if tid < len(xarr):
                # The function decorated with numba.jit may be directly reused
                res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])

        f.forall(len(X))(results, X, Y, Z)
        print(results)
        host = results.copy_to_host()
    """)
    want = [4 * z * (2 * x - (4 * y) / 2 * np.pi) for x, y, z in ([1, 2, 3], [10, 2, 14],
                                                                 [234, 4014, 2211])]
    np.testing.assert_allclose(ns["host"], want, rtol=1e-12)


HEAT = """
    import numpy as np
    from numba import cuda

    @cuda.jit
    def solve_heat_equation(buf_0, buf_1, timesteps, k):
        i = cuda.grid(1)

        # Don't continue if our index is outside the domain
        if i >= len(buf_0):
            return

        # Prepare to do a grid-wide synchronization later
        grid = cuda.cg.this_grid()

        for step in range(timesteps):
            # Select the buffer from the previous timestep
            if (step % 2) == 0:
                data = buf_0
                next_data = buf_1
            else:
                data = buf_1
                next_data = buf_0

            # Get the current temperature associated with this point
            curr_temp = data[i]

            # Apply formula from finite difference equation
            if i == 0:
                # Left wall is held at T = 0
                next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
            elif i == len(data) - 1:
                # Right wall is held at T = 0
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
            else:
                # Interior points are a weighted average of their neighbors
                next_temp = curr_temp + k * (
                    data[i - 1] - (2 * curr_temp) + data[i + 1]
                )

            # Write new value to the next buffer
            next_data[i] = next_temp

            # Wait for every thread to write before moving on
            grid.sync()

    # Set up an array with a single hot spot in the middle
    size = 1001
    data = np.zeros(size)
    data[500] = 10000

    # Allocate a second buffer for the odd-numbered timesteps
    buf_0 = cuda.to_device(data)
    buf_1 = cuda.device_array_like(buf_0.copy_to_host())

    # Set the thermal diffusivity and number of timesteps
    k = 0.25
    niter = 100

    solve_heat_equation.forall(len(data))(buf_0, buf_1, niter, k)
    result = buf_0.copy_to_host()
"""


def test_numba_docs_heat_equation_with_grid_sync(tmp_path):
    # Numba's documentation, "1D Heat Equation" (cuda.cg.this_grid().sync()), unchanged but
    # for fewer time steps: the emulation runs every thread of the grid on the CPU.
    ns = run_example(tmp_path, HEAT)
    want = np.zeros(1001)
    want[500] = 10000
    nxt = np.empty_like(want)
    for _ in range(100):
        nxt[1:-1] = want[1:-1] + 0.25 * (want[:-2] - 2 * want[1:-1] + want[2:])
        nxt[0] = want[0] + 0.25 * (want[1] - 2 * want[0])
        nxt[-1] = want[-1] + 0.25 * (want[-2] - 2 * want[-1])
        want, nxt = nxt, want
    np.testing.assert_allclose(ns["result"], want, rtol=1e-12)
    assert ns["solve_heat_equation"].inspect_ptx()  # the cooperative kernel compiles too
