// src/compile/toolkit.h: where the CUDA toolkit pieces (NVRTC, CCCL headers) live on this machine
#pragma once
#include <string>
#include <vector>

namespace nu {

// Directories from pip wheels (nvidia-cuda-nvrtc, nvidia-cuda-cccl), found by Python and
// searched after the toolkit directories.
void set_wheel_search_paths(std::vector<std::string> library_dirs,
                            std::vector<std::string> include_dirs);

// Toolkit roots in search order: $NUMBACUDA_UFUNC_CUDA_HOME, $CUDA_HOME, $CUDA_PATH,
// /usr/local/cuda.
std::vector<std::string> cuda_home_candidates();

// Library directories to search for libnvrtc, in order.
std::vector<std::string> library_search_dirs();

// The directory holding cub/cub.cuh ("" when none is found).
std::string cub_include_dir();

bool file_exists(const std::string& path);

}  // namespace nu
