// src/compile/kernel_cache.h: memory + disk cache of compiled kernels (PTX, CUBIN, host .so)
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nu {

struct cache_stats {
    std::uint64_t memory_hits = 0;
    std::uint64_t disk_hits = 0;
    std::uint64_t nvrtc_compiles = 0;
    std::uint64_t host_compiles = 0;
    std::uint64_t rejected_entries = 0;  // corrupt or truncated files that were rebuilt
};

// $NUMBACUDA_UFUNC_CACHE_DIR, else $XDG_CACHE_HOME/numbacuda_ufunc, else
// ~/.cache/numbacuda_ufunc, else (no HOME) /tmp/numbacuda_ufunc-cache-<euid>, made 0700;
// created on demand.
std::string cache_dir();

// False when NUMBACUDA_UFUNC_DISABLE_CACHE=1 (read at each call so tests can flip it) or
// the folder is refused (cache_dir_refusal).
bool disk_cache_enabled();
// Why the cache folder is refused (other users can write to it, or the /tmp fallback is not
// this user's private folder), or "": then disk_cache_enabled() is false and builds stay in
// memory.
std::string cache_dir_refusal();
// Why files in `dir` must not be trusted (anyone else can write there, or it is the shared
// /tmp fallback not private to this user), or "". Also used for cache=True folders.
std::string folder_refusal(const std::string& dir);

// SHA-256 over every input that changes the artifact: kind, source, options, toolchain id,
// package version and the embedded headers.
std::string cache_key(const std::string& kind, const std::string& source,
                      const std::vector<std::string>& options, const std::string& toolchain);

// Returns the artifact for `key`: from memory, else from disk (checksum and key verified,
// then `accept`ed when given), else from build(); new artifacts are written to disk
// atomically, replacing a rejected entry. Thread-safe; concurrent builds of one key in
// several processes all succeed (last rename wins, same bytes).
std::string cached_artifact(const std::string& key, const std::function<std::string()>& build,
                            bool use_memory = true,
                            const std::function<bool(const std::string&)>& accept = nullptr);

enum class compile_kind { nvrtc, host };
void count_compile(compile_kind kind);
void count_memory_hit();
cache_stats get_cache_stats();
void reset_cache_stats();
void clear_memory_cache();

// SHA-256 of the kernel headers embedded in this build (every cache key includes it).
const std::string& headers_digest();

// Path of the disk entry for a key (whether or not it exists).
std::string cache_entry_path(const std::string& key);

// One file in the entry format of the kernel cache, anywhere (cuda.jit(cache=True)'s files
// in __pycache__ use it): `key` is 64 hex digits. read_cache_file is false for a missing,
// special, oversized, truncated or corrupt file and for another key's entry;
// write_cache_file writes atomically (temporary file + rename) and is false when it could
// not.
bool read_cache_file(const std::string& path, const std::string& key, std::string& payload);
bool write_cache_file(const std::string& path, const std::string& key, const std::string& payload);

}  // namespace nu
