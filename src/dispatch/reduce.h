// src/dispatch/reduce.h: a reduction operator's loops and its call path (axes, staging)
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "array/device_array.h"
#include "dispatch/casting.h"
#include "launch/reduce_launch.h"

namespace nu {

// One translated operator T(T, T).
struct reduce_loop {
    dtype type = dtype::float64;
    std::string function;  // name of the translated function in `source`
    std::string source;    // the function and the helpers it calls
};

// An array argument: where its memory is, and its view.
struct reduce_operand {
    array_view view;
    bool on_host = false;  // NumPy memory (staged through the device on a GPU)
};

// A compiled variant of a reducer or ufunc-method kernel: the loop and the dtypes it
// loads and stores (casts happen inside the kernel).
struct loop_cast_key {
    int loop;
    dtype in, out;
    bool operator==(const loop_cast_key& o) const { return loop == o.loop && in == o.in && out == o.out; }
};
struct loop_cast_key_hash {
    std::size_t operator()(const loop_cast_key& k) const {
        return static_cast<std::size_t>(k.loop) * 1000003u + static_cast<std::size_t>(k.in) * 31u +
               static_cast<std::size_t>(k.out);
    }
};

// The engine side of cuda.reduce and of ufunc.reduce: one binary operator, a loop per
// type, and the kernels built for each (loop, input dtype, output dtype).
class reducer {
public:
    reducer(std::string name, bool host_target, bool fastmath);

    const std::string& name() const { return m_name; }
    bool host_target() const { return m_host_target; }
    void add_loop(reduce_loop l);
    const std::vector<reduce_loop>& loops() const { return m_loops; }
    // The loop of exactly this type; -1 when none.
    int find_loop(dtype t) const;
    // The translation unit for a loop reading `in` and writing `out`, and its entry prefix.
    // `kernels`: a mask of 1 << reduce_kernel (all six by default).
    std::string source(int loop, dtype in, dtype out, std::string* entry = nullptr,
                       unsigned kernels = k_all_reduce_kernels) const;
    // The kernels built so far for a loop and dtypes (a mask of 1 << reduce_kernel).
    unsigned built_kernels(int loop, dtype in, dtype out);

    // Folds `in` over `axes` (sorted, distinct, < in.ndim) into `out`, whose shape is the
    // input's shape without those axes; elements are converted to the loop's type on
    // load and the result to out's dtype on store. `init` (16 bytes of the loop's type,
    // or nullptr) is folded in once per output, first. `api` names the caller in errors.
    void execute(int loop, const reduce_operand& in, const std::vector<int>& axes,
                 const unsigned char* init, const reduce_operand& out, const stream_ref& stream,
                 const char* api);

private:
    using kernel_key = loop_cast_key;
    using kernel_key_hash = loop_cast_key_hash;
    const reduce_kernel_set& kernels(const kernel_key& key, bool host);

    std::string m_name;
    bool m_host_target;
    bool m_fastmath;
    std::vector<reduce_loop> m_loops;
    std::mutex m_mutex;  // guards m_loops growth and m_kernels: calls may come from threads
    std::unordered_map<kernel_key, std::unique_ptr<reduce_kernel_set>, kernel_key_hash> m_kernels;
};

}  // namespace nu
