// src/compile/host_build.cpp: host backend build, system C++ compiler -> dlopen'ed library
#include "compile/host_build.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "compile/compile_error.h"
#include "compile/embedded_headers.h"
#include "compile/kernel_cache.h"
#include "compile/toolkit.h"

extern char** environ;

namespace nu {

namespace {

std::mutex g_mutex;
std::map<std::string, std::shared_ptr<host_library>> g_loaded;

// Seconds after which a build directory left by a killed build is removed even when its
// process id is alive again (pid reuse, or a process in another pid namespace).
constexpr long k_stale_build_seconds = 3600;

void remove_tree(const std::string& dir);

// A nu_build_<pid>_XXXXXX directory (or an entry's .tmp. file) is stale when its process is
// gone and it is older than a minute (the age guards against another pid namespace sharing
// the cache), or when it is older than an hour whatever its pid says.
// Only a real directory of this user's counts: a symbolic link planted under the name (a
// shared $TMPDIR) is never followed (issue 35).
bool is_stale(const std::string& path, const char* name, std::size_t prefix_len) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return false;
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return false;
    const long age = long(::time(nullptr) - st.st_mtime);
    if (age > k_stale_build_seconds) return true;
    if (age < 60) return false;
    const long pid = std::strtol(name + prefix_len, nullptr, 10);
    return pid > 0 && pid != long(::getpid()) && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

// Removes what killed builds left in `dir` (once per directory and process).
void clean_stale_builds(const std::string& dir) {
    static std::mutex mutex;
    static std::set<std::string> cleaned;
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (!cleaned.insert(dir).second) return;
    }
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    std::vector<std::string> stale;
    while (dirent* e = ::readdir(d)) {
        if (std::strncmp(e->d_name, "nu_build_", 9) == 0 &&
            is_stale(dir + "/" + e->d_name, e->d_name, 9))
            stale.push_back(dir + "/" + e->d_name);
    }
    ::closedir(d);
    for (const auto& s : stale) remove_tree(s);
}

bool writable_dir(const std::string& d) {
    struct stat st;
    return ::stat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(d.c_str(), W_OK | X_OK) == 0;
}

// Where builds happen: <cache>/tmp (same filesystem as the entries), else $TMPDIR or /tmp
// when the cache is disabled or read-only (a shared cache on a cluster): a read-only
// cache is still read, builds go to a private directory and results stay in memory.
std::vector<std::string> temp_bases() {
    std::vector<std::string> bases;
    if (disk_cache_enabled()) {
        std::string d = cache_dir() + "/tmp";
        ::mkdir(d.c_str(), 0755);
        if (writable_dir(d)) bases.push_back(d);
    }
    const char* t = std::getenv("TMPDIR");
    bases.push_back((t && *t) ? t : "/tmp");
    if (bases.back() != "/tmp") bases.push_back("/tmp");
    return bases;
}

// A new build directory in the first temporary base, from `first` on, that takes one;
// `*used` (when given) tells which.
std::string make_temp_dir(std::size_t first = 0, std::size_t* used = nullptr) {
    std::string tried;
    const std::vector<std::string> bases = temp_bases();
    for (std::size_t k = first; k < bases.size(); ++k) {
        const std::string& base = bases[k];
        if (used) *used = k;
        clean_stale_builds(base);
        std::string pattern = base + "/nu_build_" + std::to_string(::getpid()) + "_XXXXXX";
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data())) return buf.data();
        tried += (tried.empty() ? "" : ", ") + base + " (" + std::strerror(errno) + ")";
    }
    throw std::runtime_error("build_host(): cannot create a build directory in " + tried);
}

// Removes a build directory and the files in it. Opened with O_NOFOLLOW and emptied through
// that descriptor (unlinkat), so a directory swapped for a symbolic link between the check
// and the removal empties nothing it points to.
void remove_tree(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    if (DIR* d = ::fdopendir(fd)) {  // owns fd from here
        while (dirent* e = ::readdir(d)) {
            if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
                ::unlinkat(fd, e->d_name, 0);
        }
        ::closedir(d);
    } else {
        ::close(fd);
    }
    ::rmdir(dir.c_str());
}

bool write_fd(int fd, const std::string& text) {
    const char* p = text.data();
    std::size_t n = text.size();
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= std::size_t(w);
    }
    return true;
}

// A build input that could not be written (a full or read-only disk): the build moves to the
// next temporary base (<cache>/tmp, then $TMPDIR, then /tmp) before giving up.
struct write_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void write_text(const std::string& path, const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw write_failure("build_host(): cannot write " + path + ": " + std::strerror(errno));
    const bool ok = write_fd(fd, text);
    const int err = errno;
    ::close(fd);
    if (!ok) throw write_failure("build_host(): cannot write " + path + ": " + std::strerror(err ? err : EIO));
}

std::string read_text(const std::string& path) {
    std::string out;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    char buf[1 << 16];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, std::size_t(n));
    ::close(fd);
    return out;
}

// Runs argv (no shell, so nothing in the options is interpreted) with stdout and stderr
// sent to log_path; returns the exit status.
int run_process(const std::vector<std::string>& args, const std::string& log_path) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc == ENOENT)
        throw host_compiler_missing(
            "build_host(): no host C++ compiler: '" + args[0] + "' was not found (" +
            (std::getenv("CXX") && *std::getenv("CXX") ? "from $CXX" : "on PATH; $CXX is not set") +
            "). The cpu and parallel targets and the host backend (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1) "
            "build generated C++ with it at run time; the cuda target on a GPU needs none. Install a "
            "C++17 compiler (Debian/Ubuntu: apt-get install g++; Fedora/RHEL: dnf install gcc-c++; "
            "conda: conda install -c conda-forge cxx-compiler) or set CXX to one");
    if (rc != 0)
        throw compile_error("build_host(): cannot run the host compiler '" + args[0] + "' (" +
                                std::strerror(rc) + "); set CXX to a C++17 compiler",
                            "");
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s;
}

// -march=native by default, as Numba compiles for the host CPU: AVX2 (or AVX-512) loops
// where the CPU has them instead of the 16-byte SSE2 baseline. NUMBACUDA_UFUNC_HOST_NATIVE=0
// builds for the baseline (a cache shared by machines with different CPUs, reproducible
// binaries). The cache key then includes this CPU's identity (its /proc/cpuinfo model
// and flags), so a cache shared by different machines never hands one another's code.
bool native_arch() {
#if defined(__x86_64__) || defined(__aarch64__)
    const char* v = std::getenv("NUMBACUDA_UFUNC_HOST_NATIVE");
    return !(v && std::strcmp(v, "0") == 0);
#else
    return false;  // other compilers spell it -mcpu=native; the baseline there
#endif
}

const std::string& cpu_identity() {
    static const std::string id = [] {
        std::string info = read_text("/proc/cpuinfo"), out;
        std::size_t pos = 0;
        for (const char* field : {"vendor_id", "model name", "flags", "CPU implementer",
                                  "CPU architecture", "CPU variant", "CPU part", "Features"}) {
            pos = info.find(field);
            if (pos != std::string::npos) out += info.substr(pos, info.find('\n', pos) - pos) + "\n";
        }
        return out;
    }();
    return id;
}

std::vector<std::string> base_flags() {
    // -ffp-contract=off: no a*b+c -> fma, so float results match NumPy bit for bit.
    // -O3: GCC 12's -O2 vectorises only with the very-cheap cost model, which leaves the
    // elementwise loop scalar (checked on the disassembly in tests/test_host_codegen.py).
    // -fno-plt: libm calls (sinf, expf) go straight through the GOT, not a PLT stub.
    std::vector<std::string> f = {"-std=c++17", "-O3", "-shared", "-fPIC", "-fno-plt",
                                  "-ffp-contract=off", "-fno-math-errno", "-w"};
    // -mno-fma: GCC 12's SLP vectoriser forms fused multiply-adds (vfmsubadd from complex
    // arithmetic) even with -ffp-contract=off, which changes results; without FMA
    // instructions nothing can be fused (an explicit fma() calls the C library's).
    // -mno-avx512f: AVX-512F brings FMA instructions of its own that -mno-fma leaves on, and
    // GCC 12 fuses a complex product x*y into vfmaddsub132pd with them (an AMD EPYC with
    // AVX-512, 2026-11-27; tests/test_host_codegen.py); loops are AVX2 there.
    if (native_arch()) {
        f.push_back("-march=native");
#if defined(__x86_64__)
        f.push_back("-mno-fma");
        f.push_back("-mno-fma4");
        f.push_back("-mno-avx512f");
#endif
    }
    return f;
}

// ---- precompiled header: host_prelude.h and the kernel headers, parsed once per compiler,
// flags and header digest (g++ spends ~0.6 s of a ~0.9 s build parsing them). Two
// variants: plain, and checked (NU_BOUNDSCHECK defined first, kernel.cuh included) for
// sources that begin with the NU_BOUNDSCHECK line; each is built when a build first needs
// it, in its own directory (a cpu ufunc never pays for the checked one, nor a @cuda.jit
// kernel for the plain one).
constexpr const char* k_checked_prefix = "#define NU_BOUNDSCHECK 1\n";

struct pch_variant {
    const char* header;
    const char* text;
};
const pch_variant k_pch[2] = {
    {"nu_host_pch.h",
     "#include \"host_prelude.h\"\n#include \"elementwise.cuh\"\n#include \"gufunc.cuh\"\n"
     "#include \"reduce.cuh\"\n"},
    {"nu_host_pch_checked.h",
     "#define NU_BOUNDSCHECK 1\n#include \"host_prelude.h\"\n#include \"elementwise.cuh\"\n"
     "#include \"gufunc.cuh\"\n#include \"kernel.cuh\"\n"},
};

// Compiles one variant's .gch in `dir` (which holds the headers); false when it fails.
bool build_pch(const std::string& dir, const pch_variant& v, const std::vector<std::string>& options) {
    write_text(dir + "/" + v.header, v.text);
    std::vector<std::string> args = host_compiler_command();
    for (const auto& f : base_flags())
        if (f != "-shared") args.push_back(f);
    args.insert(args.end(), options.begin(), options.end());
    const std::string out = dir + "/" + v.header + ".gch";
    args.insert(args.end(), {"-x", "c++-header", "-I", dir, "-o", out, dir + "/" + v.header});
    return run_process(args, dir + "/pch.log") == 0 && file_exists(out);
}

// A pch-* directory unused (its mtime: touched at every build that uses it) for a day is
// removed, and so is any beyond the 8 most recently used once unused for 10 minutes: a
// new one appears whenever the headers, compiler or flags change.
constexpr long k_pch_unused_seconds = 24 * 3600;
constexpr long k_pch_keep = 8;
constexpr long k_pch_grace_seconds = 600;

void touch(const std::string& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

// Removes old pch-* directories of the cache (once per process), never `keep`.
void collect_pch_dirs(const std::string& keep) {
    static std::atomic<bool> done{false};
    if (done.exchange(true) || !writable_dir(cache_dir())) return;
    DIR* d = ::opendir(cache_dir().c_str());
    if (!d) return;
    std::vector<std::pair<long, std::string>> found;  // (age, path)
    const long now = long(::time(nullptr));
    while (dirent* e = ::readdir(d)) {
        if (std::strncmp(e->d_name, "pch-", 4) != 0) continue;
        const std::string path = cache_dir() + "/" + e->d_name;
        struct stat st;
        if (path == keep || ::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        found.emplace_back(now - long(st.st_mtime), path);
    }
    ::closedir(d);
    std::sort(found.begin(), found.end());
    for (std::size_t k = 0; k < found.size(); ++k) {
        const long age = found[k].first;
        // rank k + 1 counts `keep` among the most recently used
        if (age > k_pch_unused_seconds || (long(k) + 1 >= k_pch_keep && age > k_pch_grace_seconds))
            remove_tree(found[k].second);
    }
}

// The options that shape a precompiled header: all but include directories (a linked
// file's own, which the embedded headers never search), so kernels that differ only in
// those share one header.
std::vector<std::string> pch_options(const std::vector<std::string>& options) {
    std::vector<std::string> kept;
    for (std::size_t k = 0; k < options.size(); ++k) {
        if (options[k] == "-I") {
            ++k;  // and its directory
            continue;
        }
        if (options[k].compare(0, 2, "-I") != 0) kept.push_back(options[k]);
    }
    return kept;
}

// Precompiled-header directories private to this process (the cache disabled or read-only):
// removed at exit, or each short-lived worker of a pool left 11 MB behind (issue 35).
struct private_pch_dirs {
    std::mutex mutex;
    std::vector<std::string> dirs;
    ~private_pch_dirs() {
        for (const auto& d : dirs) remove_tree(d);
    }
};
private_pch_dirs& private_pchs() {
    static private_pch_dirs p;
    return p;
}

// The directory holding the embedded headers and variant `v`'s .gch for `options`: in the
// cache (<cache>/pch-<digest>, built in a temporary directory and renamed into place, so
// concurrent processes never see half a header), else in a private directory of this
// process. Empty when no precompiled header could be built: compiles then parse headers.
std::string pch_dir(const std::vector<std::string>& options, const pch_variant& v) {
    static std::mutex mutex;
    static std::map<std::string, std::string> dirs;  // digest -> directory
    std::vector<std::string> all = base_flags();
    all.insert(all.end(), options.begin(), options.end());
    const std::string digest =
        cache_key("host-pch", v.text, all,
                  join(host_compiler_command()) + (native_arch() ? "|" + cpu_identity() : ""))
            .substr(0, 24);
    const std::string gch = std::string("/") + v.header + ".gch";
    std::lock_guard<std::mutex> lock(mutex);
    auto it = dirs.find(digest);
    if (it != dirs.end()) {
        if (it->second.empty()) return it->second;
        touch(it->second);  // in use: not collected by other processes
        // Collected meanwhile (unused for a day by every other process): built again.
        if (file_exists(it->second + gch)) return it->second;
        dirs.erase(it);
    }
    std::string final_dir;
    if (disk_cache_enabled()) {
        final_dir = cache_dir() + "/pch-" + digest;
        touch(final_dir);
        if (file_exists(final_dir + gch)) {
            collect_pch_dirs(final_dir);
            return dirs[digest] = final_dir;
        }
    }
    std::string dir;
    try {
        dir = make_temp_dir();
        for (const auto& h : embedded_headers()) write_text(dir + "/" + h.name, h.text);
        if (!build_pch(dir, v, options)) {
            remove_tree(dir);
            return dirs[digest] = "";
        }
    } catch (const std::exception&) {
        if (!dir.empty()) remove_tree(dir);
        return dirs[digest] = "";
    }
    ::unlink((dir + "/pch.log").c_str());
    if (!final_dir.empty() && writable_dir(cache_dir())) {
        if (::rename(dir.c_str(), final_dir.c_str()) == 0) {
            collect_pch_dirs(final_dir);
            return dirs[digest] = final_dir;
        }
        if (file_exists(final_dir + gch)) {  // another process won
            remove_tree(dir);
            return dirs[digest] = final_dir;
        }
    }
    {
        std::lock_guard<std::mutex> plock(private_pchs().mutex);
        private_pchs().dirs.push_back(dir);
    }
    return dirs[digest] = dir;  // private to this process (read-only or disabled cache)
}

// A precompiled header that made a build fail while the same build without it succeeded is
// damaged (a truncated .gch): its directory goes, so that the next use builds it again and
// renames it into place (pch_dir checks for the file) instead of every later build failing,
// in every process (issue 35).
void discard_pch(const std::string& dir) { remove_tree(dir); }

// One host compile in `dir`: the kernel's unit (and linked units) against the headers in
// `headers` (a precompiled-header directory), or against embedded headers written into
// `dir` when `headers` is empty. The compiler's exit status; `*args_out` the command.
int compile_in(const std::string& dir, const std::string& headers, const pch_variant& v,
               const std::string& source, const std::vector<std::string>& options,
               const std::vector<std::string>& extra_sources, std::vector<std::string>* args_out) {
    std::string src = dir + "/nu_module.cpp", lib = dir + "/nu_module.so",
                log = dir + "/build.log";
    std::string first = "#include \"host_prelude.h\"\n";
    if (!headers.empty()) {
        first = std::string("#include \"") + v.header + "\"\n";
    } else {
        for (const auto& h : embedded_headers()) write_text(dir + "/" + h.name, h.text);
    }
    write_text(src, first + source);
    std::vector<std::string> args = host_compiler_command();
    for (const auto& f : base_flags()) args.push_back(f);
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"-I", headers.empty() ? dir : headers, "-o", lib, src});
    // Linked CUDA C++ files (cuda.jit(link=...)): each its own translation unit, as NVRTC
    // compiles them on the GPU path, so their declarations never meet the kernel's. A
    // function the kernel calls and no file defines is a link error here, not at dlopen.
    for (std::size_t k = 0; k < extra_sources.size(); ++k) {
        const std::string path = dir + "/nu_link_" + std::to_string(k) + ".cpp";
        write_text(path, "#define NU_HOST_STD_CMATH 1\n#include \"host_prelude.h\"\n" + extra_sources[k]);
        args.push_back(path);
    }
    if (!extra_sources.empty()) args.push_back("-Wl,--no-undefined");
    count_compile(compile_kind::host);
    *args_out = args;
    return run_process(args, log);
}

std::string compile_shared_object(const std::string& source,
                                  const std::vector<std::string>& options,
                                  const std::vector<std::string>& extra_sources) {
    const bool checked = source.compare(0, std::strlen(k_checked_prefix), k_checked_prefix) == 0;
    const pch_variant& v = k_pch[checked ? 1 : 0];
    const std::string headers = pch_dir(pch_options(options), v);
    for (std::size_t base = 0;; ++base) {
        std::string dir = make_temp_dir(base, &base);
        struct cleanup {
            std::string d;
            ~cleanup() { remove_tree(d); }
        } guard{dir};
        try {
            std::vector<std::string> args;
            int rc = compile_in(dir, headers, v, source, options, extra_sources, &args);
            if (rc != 0 && !headers.empty()) {
                // Without the precompiled header: success there means the header is damaged.
                std::vector<std::string> plain;
                if (compile_in(dir, "", v, source, options, extra_sources, &plain) == 0) {
                    discard_pch(headers);
                    rc = 0;
                }
                args = plain;
            }
            if (rc != 0) {
                std::string text = read_text(dir + "/build.log");
                std::string msg = "build_host(): the host compiler failed (exit status " +
                                  std::to_string(rc) + ")\ncommand: " + join(args) + "\n" + text;
                const char* dbg = std::getenv("NUMBACUDA_UFUNC_DEBUG_SOURCE");
                if (dbg && std::string(dbg) == "1") msg += "\n---- source ----\n" + source;
                throw compile_error(msg, text);
            }
            return read_text(dir + "/nu_module.so");
        } catch (const write_failure& e) {
            // A full disk under the cache: the next base ($TMPDIR), as for a read-only one.
            if (base + 1 >= temp_bases().size()) throw;
        }
    }
}

// Structural check of a cached shared object before dlopen: an ELF shared object of this
// machine whose header tables lie inside the file. Garbage behind a valid checksum is
// refused here; what passes and still fails to load is refused by dlopen.
bool plausible_shared_object(const std::string& b) {
    if (b.size() < sizeof(ElfW(Ehdr)) || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0) return false;
    ElfW(Ehdr) h;
    std::memcpy(&h, b.data(), sizeof h);
    const std::uint64_t size = b.size();
#if defined(__x86_64__)
    const int machine = EM_X86_64;
#elif defined(__aarch64__)
    const int machine = EM_AARCH64;
#else
    const int machine = h.e_machine;
#endif
    if (!(h.e_ident[EI_CLASS] == (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32) &&
          h.e_type == ET_DYN && h.e_machine == machine && h.e_phnum > 0 &&
          h.e_phentsize == sizeof(ElfW(Phdr)) &&
          h.e_phoff + std::uint64_t(h.e_phnum) * h.e_phentsize <= size &&
          h.e_shoff + std::uint64_t(h.e_shnum) * h.e_shentsize <= size))
        return false;
    // Every loaded segment must lie in the file: dlopen maps them, and a truncated library
    // (with a valid checksum: truncated before it was written) faulted with SIGBUS on its
    // first touched page past the end, in every process (issue 35).
    for (std::uint64_t i = 0; i < h.e_phnum; ++i) {
        ElfW(Phdr) ph;
        std::memcpy(&ph, b.data() + h.e_phoff + i * h.e_phentsize, sizeof ph);
        if (ph.p_type == PT_LOAD && (ph.p_offset > size || ph.p_filesz > size - ph.p_offset))
            return false;
    }
    return true;
}

// dlopen that leaves this thread's floating-point environment as it was. A library built
// with -ffast-math (fastmath=True) carries GCC's crtfastmath.o, whose constructor turns on
// flush-to-zero and denormals-are-zero for the thread that loads it, and threads started
// later inherit them: every later denormal result of the process, NumPy's included, would
// become 0. The kernel's own code does not need them.
void* dlopen_keeping_fp_env(const std::string& path) {
    std::fenv_t env;
    const bool saved = std::fegetenv(&env) == 0;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (saved) std::fesetenv(&env);
    return handle;
}

// dlopen needs a file: an anonymous memory file (memfd), kept open while the library is
// loaded so that its /proc/self/fd path is never reused for another library (glibc
// returns an already-loaded library for a repeated path). Where memfd is unavailable, a
// uniquely named temporary file, unlinked after loading.
void* load_shared_object(const std::string& bytes, const std::string& key, int* fd_out,
                         std::string* error) {
    *fd_out = -1;
    int fd = ::memfd_create(("nu_" + key.substr(0, 16)).c_str(), MFD_CLOEXEC);
    if (fd >= 0) {
        std::string path = "/proc/self/fd/" + std::to_string(fd);
        if (write_fd(fd, bytes)) {
            if (void* handle = dlopen_keeping_fp_env(path)) {
                *fd_out = fd;
                return handle;
            }
            *error = ::dlerror();
            if (::access(path.c_str(), R_OK) == 0) {  // /proc works: the library is bad
                ::close(fd);
                return nullptr;
            }
        }
        ::close(fd);
    }
    static std::atomic<unsigned> counter{0};
    std::string path = make_temp_dir();
    struct cleanup {
        std::string d;
        ~cleanup() { remove_tree(d); }
    } guard{path};
    path += "/nu_" + key.substr(0, 16) + "_" + std::to_string(counter.fetch_add(1)) + ".so";
    write_text(path, bytes);
    void* handle = dlopen_keeping_fp_env(path);
    if (!handle) *error = ::dlerror();
    return handle;
}

// A loaded library with every symbol in `symbols`, or nullptr (and why in `error`).
std::shared_ptr<host_library> try_load(const std::string& bytes, const std::string& key,
                                       const std::vector<std::string>& symbols,
                                       std::string* error) {
    if (!plausible_shared_object(bytes)) {
        *error = "not an ELF shared object for this machine";
        return nullptr;
    }
    int fd = -1;
    void* handle = load_shared_object(bytes, key, &fd, error);
    if (!handle) return nullptr;
    auto lib = std::make_shared<host_library>(handle, key, fd);
    for (const auto& name : symbols) {
        if (!::dlsym(handle, name.c_str())) {
            *error = "no symbol named '" + name + "'";
            return nullptr;
        }
    }
    return lib;
}

}  // namespace

host_library::~host_library() {
    if (m_handle) ::dlclose(m_handle);
    if (m_fd >= 0) ::close(m_fd);
}

void* host_library::symbol(const std::string& name) const {
    void* p = ::dlsym(m_handle, name.c_str());
    if (!p) throw std::out_of_range("host_library.symbol(): no symbol named '" + name + "'");
    return p;
}

std::vector<std::string> host_compiler_command() {
    std::vector<std::string> cmd;
    if (const char* cxx = std::getenv("CXX"); cxx && *cxx) {
        std::istringstream words(cxx);
        for (std::string w; words >> w;) cmd.push_back(w);
    }
    if (cmd.empty()) cmd.push_back("c++");
    return cmd;
}

std::shared_ptr<host_library> build_host(const std::string& source,
                                         const std::vector<std::string>& options,
                                         const std::vector<std::string>& symbols,
                                         const std::vector<std::string>& extra_sources) {
    std::vector<std::string> all = base_flags();
    all.insert(all.end(), options.begin(), options.end());
    std::string keyed = source;
    for (const auto& extra : extra_sources) keyed += std::string("\0nu_link_unit\0", 14) + extra;
    std::string key = cache_key("host-so", keyed, all,
                                join(host_compiler_command()) + (native_arch() ? "|" + cpu_identity() : ""));
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = g_loaded.find(key);
        if (it != g_loaded.end()) {
            count_memory_hit();
            return it->second;
        }
    }
    // The loaded library is the memory cache; the artifact layer only does disk. A disk
    // entry that does not load, or lacks a symbol, is rejected there and rebuilt.
    std::shared_ptr<host_library> lib;
    std::string why;
    std::string bytes = cached_artifact(
        key, [&] { return compile_shared_object(source, options, extra_sources); }, /*use_memory=*/false,
        [&](const std::string& cached) { return bool(lib = try_load(cached, key, symbols, &why)); });
    if (!lib) {
        lib = try_load(bytes, key, symbols, &why);
        if (!lib) throw std::runtime_error("build_host(): the built library does not load: " + why);
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_loaded.emplace(key, lib).first->second;
}

}  // namespace nu
