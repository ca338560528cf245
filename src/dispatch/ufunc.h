// src/dispatch/ufunc.h: a ufunc's loops, loop selection and its elementwise call path
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "array/device_array.h"
#include "dispatch/casting.h"
#include "dispatch/device_cast.h"
#include "dispatch/operand.h"
#include "launch/elementwise_launch.h"

namespace nu {

enum class target { cuda, cpu, parallel };

// One compiled signature: the translated __device__ function and its types.
struct loop {
    std::vector<dtype> in;
    dtype out = dtype::float64;
    std::string function;  // name of the translated function in `source`
    std::string source;    // the function and the helpers it calls
};

struct call_plan {
    int loop = -1;
    shape_t shape;       // broadcast shape: the result's shape
    dtype out_type = dtype::float64;
    char order = 'C';    // memory order for a new result ('F' when every input is)
};

class ufunc {
public:
    ufunc(std::string name, int nin, target where, bool fastmath);

    const std::string& name() const { return m_name; }
    int nin() const { return m_nin; }
    target where() const { return m_target; }
    bool fastmath() const { return m_fastmath; }
    // Lazy ufuncs (vectorize without signatures) compile a loop for the exact NEP 50 types
    // of each call and select only exact matches: the loop depends on the types alone.
    bool lazy() const { return m_lazy; }
    void set_lazy(bool lazy) { m_lazy = lazy; }

    void add_loop(loop l);
    // Loops are only appended (with the GIL held, from Python); a deque keeps references to
    // them valid, and code running without the GIL looks them up with loop_at().
    const std::deque<loop>& loops() const { return m_loops; }
    const loop& loop_at(int index);
    std::vector<std::string> type_strings() const;  // NumPy style: "ff->f"

    // The first loop for these inputs: exact match, then safe casts (weak scalars take the
    // loop's type when they fit); -1 when none.
    int select_loop(const std::vector<operand>& inputs) const;
    // Loop, broadcast shape and result type; `out` (when given) fixes the shape. Throws
    // type_error when no loop matches and value_error when shapes do not broadcast.
    call_plan plan(const std::vector<operand>& inputs, const operand* out) const;
    // The same with the loop chosen by the caller (dtype=, signature=) and out's casting
    // rule (casting=); `extra` (where=) takes part in broadcasting when not null.
    call_plan plan_with(int loop, const std::vector<operand>& inputs, const operand* out,
                        casting_rule out_casting, const operand* extra) const;
    // The masked variant of `loop` writing `out_type` (where=): a loop of the where-ufunc
    // taking (where, out's old value, inputs...) and returning where ? f(inputs) : old.
    // Built on first use; callers execute it on where_ufunc().
    int where_loop(int loop, dtype out_type);
    ufunc& where_ufunc();
    // Runs the loop into `out` (shape == plan.shape). Host arrays are read and written in
    // place on the host backend and staged through device memory on a GPU.
    void execute(const call_plan& plan, const std::vector<operand>& inputs, const operand& out,
                 const stream_ref& stream);

    // `loop` as NumPy's inner loop runs it (cpu and parallel targets only; type_error for
    // cuda): its strided 1-d host kernel, built (or found in the cache) on first use.
    numpy_inner_loop numpy_loop(int loop);

    std::string no_loop_message(const std::vector<operand>& inputs) const;
    // Calls whose host data moved in overlapped chunks (see run_pipelined).
    long long pipelined_calls() const { return m_pipelined_calls; }
    // (entry, source) of every kernel variant built so far.
    std::vector<std::pair<std::string, std::string>> kernel_sources();
    // (entry, translation unit) of `loop`'s kernel for arrays of its own dtypes: the
    // contiguous variant (ndim 0) or the strided one over `ndim` dimensions, 32-bit
    // indices, no by-value scalars (for inspection; a call builds the same text).
    // `inner`: the strided variant's stride class per operand, output first ('c' unit
    // stride, 'z' zero, anything else any stride); empty: any stride for all.
    std::pair<std::string, std::string> variant_source(int loop, int ndim, const std::string& inner = "");

private:
    // A queued launch whose result may still need to come back to the host.
    struct staged_launch {
        device_array staged_out;               // device copy of a host `out`
        std::vector<device_array> temporaries;  // staged inputs, freed in stream order
        operand_copies copies;                  // inputs that overlapped the output
    };

    struct launch_scratch {
        elementwise_variant variant;
        std::vector<array_view> views;
        std::vector<scalar_value> values;
        std::vector<shape_t> strides;
        std::vector<const void*> pointers;  // output first (plan_inner_strides)
        std::vector<dtype> types;
    };

    const elementwise_kernel& kernel(const elementwise_variant& v, bool host);
    // Queues the kernel; host operands are staged through device memory when `stage_host`.
    staged_launch launch(const call_plan& plan, const std::vector<operand>& inputs, const operand& out,
                         const stream_ref& stream, bool stage_host);
    void finish(staged_launch& pending, const operand& out, const stream_ref& stream);
    // Elements per chunk when host data should move in overlapped chunks; 0 when not.
    std::int64_t pipeline_chunk(const call_plan& plan, const std::vector<operand>& inputs,
                                const operand& out, std::int64_t n) const;
    void run_pipelined(const call_plan& plan, const std::vector<operand>& inputs, const operand& out,
                       std::int64_t n, std::int64_t chunk, const stream_ref& stream);

    std::string m_name;
    int m_nin;
    target m_target;
    bool m_fastmath;
    bool m_lazy = false;
    std::deque<loop> m_loops;
    std::unique_ptr<ufunc> m_where;                 // where= variants of the loops
    std::unordered_map<long long, int> m_where_loops;  // loop * 64 + out dtype -> its index
    std::atomic<long long> m_pipelined_calls{0};
    std::mutex m_mutex;  // guards m_kernels: calls may come from several threads
    std::unordered_map<elementwise_variant, std::unique_ptr<elementwise_kernel>,
                       elementwise_variant_hash>
        m_kernels;
};

}  // namespace nu
