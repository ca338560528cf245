// src/compile/host_build.cpp: host backend build, system C++ compiler -> dlopen'ed library
#include "compile/host_build.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
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

std::string temp_base() {
    if (disk_cache_enabled()) {
        std::string d = cache_dir() + "/tmp";
        ::mkdir(d.c_str(), 0755);
        if (file_exists(d)) return d;
    }
    const char* t = std::getenv("TMPDIR");
    return (t && *t) ? t : "/tmp";
}

std::string make_temp_dir() {
    std::string pattern = temp_base() + "/nu_build_XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data()))
        throw std::runtime_error("build_host(): cannot create a build directory in " +
                                 temp_base() + " (" + std::strerror(errno) + ")");
    return buf.data();
}

void remove_tree(const std::string& dir) {
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d)) {
            if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
                ::unlink((dir + "/" + e->d_name).c_str());
        }
        ::closedir(d);
    }
    ::rmdir(dir.c_str());
}

void write_text(const std::string& path, const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("build_host(): cannot write " + path);
    const char* p = text.data();
    std::size_t n = text.size();
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            ::close(fd);
            throw std::runtime_error("build_host(): cannot write " + path);
        }
        p += w;
        n -= std::size_t(w);
    }
    ::close(fd);
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

std::vector<std::string> base_flags() {
    // -ffp-contract=off: no a*b+c -> fma, so float results match NumPy bit for bit.
    return {"-std=c++17", "-O2", "-shared", "-fPIC", "-ffp-contract=off", "-fno-math-errno",
            "-w"};
}

std::string compile_shared_object(const std::string& source,
                                  const std::vector<std::string>& options) {
    std::string dir = make_temp_dir();
    struct cleanup {
        std::string d;
        ~cleanup() { remove_tree(d); }
    } guard{dir};
    for (const auto& h : embedded_headers()) write_text(dir + "/" + h.name, h.text);
    std::string src = dir + "/nu_module.cpp", lib = dir + "/nu_module.so",
                log = dir + "/build.log";
    write_text(src, "#include \"host_prelude.h\"\n" + source);
    std::vector<std::string> args = host_compiler_command();
    for (const auto& f : base_flags()) args.push_back(f);
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"-I", dir, "-o", lib, src});
    count_compile(compile_kind::host);
    int rc = run_process(args, log);
    if (rc != 0) {
        std::string text = read_text(log);
        std::string msg = "build_host(): the host compiler failed (exit status " +
                          std::to_string(rc) + ")\ncommand: " + join(args) + "\n" + text;
        const char* dbg = std::getenv("NUMBACUDA_UFUNC_DEBUG_SOURCE");
        if (dbg && std::string(dbg) == "1") msg += "\n---- source ----\n" + source;
        throw compile_error(msg, text);
    }
    return read_text(lib);
}

// dlopen needs a file: write the verified bytes to a uniquely named file, load, unlink.
// Unique names matter: glibc returns an already-loaded library for a repeated path.
void* load_shared_object(const std::string& bytes, const std::string& key) {
    static std::atomic<unsigned> counter{0};
    std::string path = temp_base() + "/nu_" + key.substr(0, 16) + "_" +
                       std::to_string(::getpid()) + "_" + std::to_string(counter.fetch_add(1)) +
                       ".so";
    write_text(path, bytes);
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string err = handle ? "" : ::dlerror();
    ::unlink(path.c_str());
    if (!handle) throw std::runtime_error("build_host(): dlopen failed: " + err);
    return handle;
}

}  // namespace

host_library::~host_library() {
    if (m_handle) ::dlclose(m_handle);
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
                                         const std::vector<std::string>& options) {
    std::vector<std::string> all = base_flags();
    all.insert(all.end(), options.begin(), options.end());
    std::string key = cache_key("host-so", source, all, join(host_compiler_command()));
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = g_loaded.find(key);
        if (it != g_loaded.end()) {
            count_memory_hit();
            return it->second;
        }
    }
    // The loaded library is the memory cache; the artifact layer only does disk.
    std::string bytes = cached_artifact(
        key, [&] { return compile_shared_object(source, options); }, /*use_memory=*/false);
    auto lib = std::make_shared<host_library>(load_shared_object(bytes, key), key);
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_loaded.emplace(key, lib).first->second;
}

}  // namespace nu
