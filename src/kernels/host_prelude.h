// src/kernels/host_prelude.h: maps CUDA qualifiers and math onto the host C++ compiler
//
// The host backend compiles the very source that NVRTC compiles; this prelude is included
// first so that __device__ functions become ordinary inline functions and the CUDA math
// API resolves to <math.h>.
#pragma once
#define NU_HOST_BUILD 1
#include <math.h>
#include <stdint.h>
#include <string.h>

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
// Kernels (kernel.cuh) run a block's threads as fibers of one OS thread, one block after
// another: a thread_local static is then one array per block, shared by its threads.
#define __shared__ static thread_local
#define __constant__
