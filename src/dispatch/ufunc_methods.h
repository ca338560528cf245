// src/dispatch/ufunc_methods.h: ufunc.accumulate, reduceat and at: layouts, staging, kernels
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/reduce.h"

namespace nu {

// The kernels of src/kernels/ufunc_methods.cuh for one operator and (operator, input,
// output) types: CUfunctions on the CUDA backend, host entry points otherwise.
struct methods_kernel_set {
    void* acc_rows = nullptr;
    void* acc_tiles_init = nullptr;
    void* acc_tiles = nullptr;
    void* reduceat = nullptr;
    void* at_check = nullptr;
    void* at_seq = nullptr;
    void* at_cas = nullptr;
    std::shared_ptr<host_library> library;  // keeps host entry points loaded
    bool host = false;
};

// ufunc.at operators with a native atomic (src/kernels/ufunc_methods.cuh's at_operator).
enum class at_operator : int { none = 0, add, min, max, bit_and, bit_or, bit_xor };
// "" -> none, "add", "min", "max", "and", "or", "xor"; anything else a value_error naming api.
at_operator at_operator_named(const std::string& name, const char* api);

// The engine side of a binary ufunc's accumulate, reduceat and at: its T(T, T) loops (the
// ones ufunc.reduce uses) and the kernels built for each (loop, input, output dtypes).
// Callers move the method's axis last; every view may have any strides.
class ufunc_methods {
public:
    // at_op: the operator recognised in the user's function, for ufunc.at's native atomics.
    ufunc_methods(std::string name, bool host_target, bool fastmath, at_operator at_op = at_operator::none);

    int add_loop(reduce_loop l);
    int find_loop(dtype t) const;
    dtype loop_type(int loop) const;
    std::string source(int loop, dtype in, dtype out, std::string* entry = nullptr) const;

    // out[..., k] = f(...f(f(in[..., 0], in[..., 1]), ...), in[..., k]); same shapes.
    void accumulate(int loop, const reduce_operand& in, const reduce_operand& out, const stream_ref& stream,
                    const char* api);
    // out[..., s] folds in[..., starts[s]:starts[s + 1]] (NumPy's reduceat rule for a start
    // not below the next); out's last axis has starts.size() elements, each start valid.
    void reduceat(int loop, const reduce_operand& in, const std::vector<long long>& starts,
                  const reduce_operand& out, const stream_ref& stream, const char* api);
    // t = target.flat[flat[i]]; t = f(t, values[i]) for each i in order (flat: C-order
    // element numbers, each in range; values: contiguous, of the loop's type, on the host).
    void at(int loop, const reduce_operand& target, const std::vector<long long>& flat,
            const array_view& values, const stream_ref& stream, const char* api);
    // The same on the device, for a 1-d device target: indices a contiguous int32/int64
    // device array (negative from the end), values a device array of the loop's type with
    // one element per index or a single one for all (`values_on_host`: that one value in
    // host memory). Out-of-bounds indices raise IndexError (the first in index order)
    // before any update is applied. No allocation and no copy per call: the bounds check
    // answers in a mapped pinned word (one stream synchronization).
    void at_device(int loop, const array_view& target, const array_view& indices, const array_view& values,
                   bool values_on_host, const stream_ref& stream, const char* api);

private:
    using kernel_key = loop_cast_key;
    using kernel_key_hash = loop_cast_key_hash;
    const methods_kernel_set& kernels(const kernel_key& key, bool host);
    bool runs_on_host() const;

    std::string m_name;
    bool m_host_target;
    bool m_fastmath;
    at_operator m_at_op;
    bool m_native_f32_add;  // NUMBACUDA_UFUNC_AT_NATIVE_FLOAT32_ADD=1 at construction
    std::vector<reduce_loop> m_loops;
    mutable std::mutex m_mutex;  // guards m_loops growth and m_kernels
    std::unordered_map<kernel_key, std::unique_ptr<methods_kernel_set>, kernel_key_hash> m_kernels;
};

}  // namespace nu
