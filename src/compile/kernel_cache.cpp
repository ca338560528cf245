// src/compile/kernel_cache.cpp: memory + disk cache, atomic writes, checksummed entries
//
// Entry file: "NUCACHE2" | key (64 hex digits) | u64 payload size (little endian) | payload |
// SHA-256 of everything before it. Anything that does not match exactly (short file, wrong
// size, wrong checksum, another key's entry copied or linked over this one) is treated as
// absent and rebuilt, so a crash mid-write or disk corruption never loads bad code. Only
// regular files up to k_max_entry_bytes are read: a FIFO or a link to /dev/zero where an
// entry should be is rejected, never waited on or read without end.
#include "compile/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "compile/embedded_headers.h"
#include "compile/sha256.h"

#ifndef NU_VERSION
#define NU_VERSION "0"
#endif

namespace nu {

namespace {

constexpr char k_magic[8] = {'N', 'U', 'C', 'A', 'C', 'H', 'E', '2'};
constexpr std::size_t k_key_chars = 64;
// Far above any kernel (host .so files are ~20 KiB, CUBINs with CUB ~1 MiB).
constexpr std::size_t k_max_entry_bytes = std::size_t(256) << 20;

std::mutex g_mutex;
std::map<std::string, std::shared_ptr<const std::string>> g_memory;
cache_stats g_stats;

bool env_is(const char* name, const char* value) {
    const char* v = std::getenv(name);
    return v && std::strcmp(v, value) == 0;
}

void make_dirs(const std::string& path) {
    for (std::size_t i = 1; i <= path.size(); ++i) {
        if (i == path.size() || path[i] == '/') {
            std::string part = path.substr(0, i);
            if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return;
        }
    }
}

// Reads a regular file of at most k_max_entry_bytes. O_NONBLOCK: opening a FIFO does not
// wait for a writer; fstat then refuses anything but a regular file.
bool read_file(const std::string& path, std::string& out) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        std::uint64_t(st.st_size) > k_max_entry_bytes) {
        ::close(fd);
        out.clear();
        return true;  // present but unusable: rejected and rebuilt
    }
    out.clear();
    out.reserve(std::size_t(st.st_size));
    char buf[1 << 16];
    while (out.size() <= k_max_entry_bytes) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, std::size_t(n));
    }
    ::close(fd);
    if (out.size() > k_max_entry_bytes) out.clear();  // grew while read: reject
    return true;
}

bool write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= std::size_t(w);
    }
    return true;
}

// Decodes the entry of `key`; false for anything but a complete, checksum-valid file
// written for exactly this key.
bool decode_entry(const std::string& file, const std::string& key, std::string& payload) {
    constexpr std::size_t header = sizeof k_magic + k_key_chars + 8, trailer = 32;
    if (file.size() < header + trailer || key.size() != k_key_chars ||
        std::memcmp(file.data(), k_magic, sizeof k_magic) != 0 ||
        file.compare(sizeof k_magic, k_key_chars, key) != 0)
        return false;
    std::uint64_t size = 0;
    for (int i = 0; i < 8; ++i)
        size |= std::uint64_t(std::uint8_t(file[sizeof k_magic + k_key_chars + i])) << (8 * i);
    if (size != file.size() - header - trailer) return false;
    auto digest = sha256().update(file.data(), header + size).digest();
    if (std::memcmp(digest.data(), file.data() + header + size, 32) != 0) return false;
    payload.assign(file, header, size);
    return true;
}

// Writes to a unique temporary file in the same directory, then renames over the entry:
// readers see either no file or a complete one. False when it could not (a read-only
// directory, a full disk): the caller keeps working from memory.
bool write_entry(const std::string& path, const std::string& key, const std::string& payload) {
    static std::atomic<unsigned> counter{0};
    std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                      std::to_string(counter.fetch_add(1));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    std::string head(k_magic, sizeof k_magic);
    head += key;
    std::uint64_t size = payload.size();
    for (int i = 0; i < 8; ++i) head += char(std::uint8_t(size >> (8 * i)));
    auto digest = sha256().update(head).update(payload).digest();
    bool ok = write_all(fd, head.data(), head.size()) &&
              write_all(fd, payload.data(), payload.size()) &&
              write_all(fd, reinterpret_cast<const char*>(digest.data()), digest.size());
    ok = (::close(fd) == 0) && ok;
    ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0;
    if (!ok) ::unlink(tmp.c_str());
    return ok;
}

// Unlinks a special file (FIFO, socket, device) where an entry is to be written: rename()
// would refuse to replace a directory, and a FIFO must not stay.
void unlink_special(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        ::unlink(path.c_str());
}

}  // namespace

bool read_cache_file(const std::string& path, const std::string& key, std::string& payload) {
    std::string file;
    return read_file(path, file) && decode_entry(file, key, payload);
}

bool write_cache_file(const std::string& path, const std::string& key, const std::string& payload) {
    unlink_special(path);
    return write_entry(path, key, payload);
}

const std::string& headers_digest() {
    static const std::string d = [] {
        sha256 h;
        for (const auto& e : embedded_headers()) h.update_field(e.name).update_field(e.text);
        return h.hex_digest();
    }();
    return d;
}

namespace {

// The folder without HOME or XDG_CACHE_HOME (cron, systemd, containers without a passwd
// entry): a predictable name in a directory every user can write to.
std::string shared_tmp_fallback() { return "/tmp/numbacuda_ufunc-cache-" + std::to_string(::geteuid()); }

// Why `dir` must not hold this process's cache, or "". The cache holds shared libraries
// that are dlopened and pickles that are unpickled: whoever can write the folder can run
// code as this user (issue 35). So a folder anyone else can write to is refused, and so is
// the /tmp fallback unless this user made it private; a read-only folder of another owner
// (a shared cache on a cluster) stays usable.
}  // namespace

namespace {

std::string mode_text(mode_t mode) {  // "755"
    return std::to_string((mode >> 6) & 7) + std::to_string((mode >> 3) & 7) + std::to_string(mode & 7);
}

}  // namespace

std::string folder_refusal(const std::string& dir) {
    struct stat st;
    const bool fallback = dir == shared_tmp_fallback();
    if ((fallback ? ::lstat(dir.c_str(), &st) : ::stat(dir.c_str(), &st)) != 0)
        return "";  // absent and not creatable: the cache is unwritable, handled as such
    const bool mine = st.st_uid == ::geteuid();
    if (!S_ISDIR(st.st_mode)) return "it is not a directory";
    if (fallback && (!mine || (st.st_mode & 077) != 0))
        return "it is the shared /tmp fallback (HOME is not set) and is not a private folder "
               "of this user (owner uid " + std::to_string(st.st_uid) + ", mode " +
               mode_text(st.st_mode) + ")";
    if ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && !mine))
        return "other users can write to it (mode " + mode_text(st.st_mode) +
               (mine ? "" : ", owner uid " + std::to_string(st.st_uid)) + ")";
    return "";
}

namespace {

std::string cache_dir_path() {
    if (const char* v = std::getenv("NUMBACUDA_UFUNC_CACHE_DIR"); v && *v) return v;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/numbacuda_ufunc";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/numbacuda_ufunc";
    return shared_tmp_fallback();
}

}  // namespace

std::string cache_dir() {
    std::string dir = cache_dir_path();
    if (dir == shared_tmp_fallback()) {
        ::mkdir(dir.c_str(), 0700);  // private from the start; refusal_of() checks who won
    } else {
        make_dirs(dir);
    }
    return dir;
}

std::string cache_dir_refusal() {
    static std::mutex mutex;
    static std::map<std::string, std::string> judged;  // by folder: the environment may change
    const std::string dir = cache_dir();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = judged.find(dir);
    if (it == judged.end()) it = judged.emplace(dir, folder_refusal(dir)).first;
    return it->second.empty() ? "" : "the cache folder " + dir + " is not used: " + it->second;
}

bool disk_cache_enabled() {
    return !env_is("NUMBACUDA_UFUNC_DISABLE_CACHE", "1") && cache_dir_refusal().empty();
}

std::string cache_key(const std::string& kind, const std::string& source,
                      const std::vector<std::string>& options, const std::string& toolchain) {
    sha256 h;
    // v2: drops CUBINs that NVRTC built unoptimised after a -G build in the same process.
    h.update_field("numbacuda_ufunc kernel cache v2").update_field(NU_VERSION);
    h.update_field(kind).update_field(source).update_field(toolchain);
    h.update_field(headers_digest());
    for (const auto& o : options) h.update_field(o);
    return h.hex_digest();
}

std::string cache_entry_path(const std::string& key) { return cache_dir() + "/" + key + ".nuc"; }

std::string cached_artifact(const std::string& key, const std::function<std::string()>& build,
                            bool use_memory, const std::function<bool(const std::string&)>& accept) {
    if (use_memory) {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = g_memory.find(key);
        if (it != g_memory.end()) {
            ++g_stats.memory_hits;
            return *it->second;
        }
    }
    bool disk = disk_cache_enabled();
    std::string path = disk ? cache_entry_path(key) : std::string();
    std::string payload;
    bool found = false;
    if (disk) {
        std::string file;
        if (read_file(path, file)) {
            // A valid checksum proves the bytes are what was written, not that they work:
            // the caller's check (a host library that loads and has its symbols) decides.
            found = decode_entry(file, key, payload) && (!accept || accept(payload));
            std::lock_guard<std::mutex> lock(g_mutex);
            ++(found ? g_stats.disk_hits : g_stats.rejected_entries);
        }
    }
    if (!found) {
        payload = build();  // outside the lock: builds take seconds and may run in parallel
        if (disk) write_cache_file(path, key, payload);  // replaces a rejected entry
    }
    if (use_memory) {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_memory.emplace(key, std::make_shared<const std::string>(payload));
    }
    return payload;
}

void count_compile(compile_kind kind) {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++(kind == compile_kind::nvrtc ? g_stats.nvrtc_compiles : g_stats.host_compiles);
}

void count_memory_hit() {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_stats.memory_hits;
}

cache_stats get_cache_stats() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_stats;
}

void reset_cache_stats() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_stats = cache_stats{};
}

void clear_memory_cache() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_memory.clear();
}

}  // namespace nu
