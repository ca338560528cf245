// src/kernels/host_prelude.h: maps CUDA qualifiers and math onto the host C++ compiler
//
// The host backend compiles the very source that NVRTC compiles; this prelude is included
// first so that __device__ functions become ordinary inline functions and the CUDA math
// API resolves to <math.h>.
#pragma once
#define NU_HOST_BUILD 1
#if defined(__GNUC__) && !defined(__clang__) && !defined(NU_HOST_STD_CMATH)
// g++ (libstdc++): the C library's math.h and stdlib.h (libstdc++'s wrappers step aside
// when this macro is set, as <cmath> itself does), plus host_math.h's C++ overloads: a
// host build then never parses <cmath> (about 0.2 s). Linked user sources, which may
// include C++ headers themselves, get NU_HOST_STD_CMATH and the standard headers.
#define _GLIBCXX_INCLUDE_NEXT_C_HEADERS 1
#include <math.h>
#include <stdlib.h>
#include "host_math.h"
#else
#include <math.h>
#include <stdlib.h>
#endif
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
