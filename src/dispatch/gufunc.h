// src/dispatch/gufunc.h: generalized ufuncs: core dimensions, loop broadcasting, launch
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/operand.h"
#include "dispatch/ufunc.h"
#include "launch/kernel.h"

namespace nu {

// One core dimension of an operand's layout: a named dimension or a fixed size.
struct core_dim {
    int name = -1;           // index into the gufunc's dimension names; -1 when fixed
    std::int64_t fixed = -1;  // the size of a fixed dimension such as the 3 of (n,3)
};

// How the translated function receives an operand (see gufunc.cuh's garg).
enum class arg_kind { view = 0, scalar = 1, one_element = 2 };

struct gufunc_loop {
    std::vector<dtype> types;     // inputs then outputs
    std::vector<arg_kind> kinds;  // per operand
    std::string function;
    std::string source;
};

// What a staged kernel (gufunc.cuh's run_device_staged) is specialised on, per operand:
// its staging mode (garg's MODE) and, when each of its core extents is at most
// k_fixed_extent (and it has at most 4 core dimensions), those extents; else none.
struct staged_spec {
    static constexpr std::int64_t k_fixed_extent = 32;
    std::vector<int> modes;
    std::vector<std::vector<std::int64_t>> extents;
    std::string key() const;
};

struct gufunc_plan {
    int loop = -1;
    shape_t loop_shape;                // broadcast loop dimensions
    std::vector<std::int64_t> sizes;   // of each named dimension
    std::vector<shape_t> out_shapes;   // full shapes of the outputs
    char order = 'C';
};

class gufunc {
public:
    gufunc(std::string name, int nin, int nout, std::vector<std::vector<core_dim>> core,
           std::vector<std::string> dim_names, target where, bool fastmath,
           std::vector<int> writable_inputs);

    const std::string& name() const { return m_name; }
    int nin() const { return m_nin; }
    int nout() const { return m_nout; }
    target where() const { return m_target; }
    // Loops are only appended (with the GIL held, from Python); a deque keeps references to
    // them valid, and code running without the GIL looks them up with loop_at().
    const std::deque<gufunc_loop>& loops() const { return m_loops; }
    const gufunc_loop& loop_at(int index);
    std::vector<std::string> type_strings() const;
    bool writable(int input) const;

    void add_loop(gufunc_loop l);
    int select_loop(const std::vector<operand>& inputs) const;
    std::string no_loop_message(const std::vector<operand>& inputs) const;

    // Core dimension sizes, loop shape and output shapes; `outputs[k]` is null for an output
    // to allocate. Throws value_error naming the argument, dimension and sizes on mismatch.
    gufunc_plan plan(int loop, const std::vector<operand>& inputs,
                     const std::vector<const operand*>& outputs) const;

    // Runs the loop. Inputs and outputs already have the loop's dtypes (device arrays of
    // another dtype are converted on the device); outputs are read-write. Returns the
    // blocks the cuda target's loop asks for (emulated or not), 0 when nothing was launched
    // or the target is cpu/parallel: the caller's low-occupancy warning reads it.
    // `fresh_outputs[k]`: output k was allocated for this call (its contents are undefined,
    // so a staged launch never copies them in).
    std::int64_t execute(const gufunc_plan& plan, const std::vector<operand>& inputs,
                 const std::vector<operand>& outputs, const stream_ref& stream,
                 const std::vector<bool>& fresh_outputs = {});

    std::vector<std::pair<std::string, std::string>> kernel_sources();
    // The translation unit of `loop` over `nloop` loop dimensions, and its entry's name
    // (what a call with that many loop dimensions builds; for inspection).
    // `staged`: the variant that copies small items through shared memory (one loop
    // dimension, GPU only; see gufunc.cuh's run_device_staged).
    // `spec`: a staged kernel's specialisation (null: staged inputs, outputs staged in and
    // out, extents read at run time).
    std::string kernel_source(int loop, int nloop, std::string* entry, bool staged = false,
                              const staged_spec* spec = nullptr);

    // Index checks in host builds of target cpu/parallel (emulation of the cuda target
    // always checks): guvectorize(boundscheck=True) or NUMBACUDA_UFUNC_BOUNDSCHECK=1.
    void set_boundscheck(bool on) { m_boundscheck = on; }
    bool boundscheck() const { return m_boundscheck; }

private:
    const compiled_kernel& kernel(int loop, int nloop, bool host, const staged_spec* spec);

    std::string m_name;
    int m_nin;
    int m_nout;
    std::vector<std::vector<core_dim>> m_core;
    std::vector<std::string> m_dim_names;
    target m_target;
    bool m_fastmath;
    bool m_boundscheck = false;
    std::vector<int> m_writable;
    std::deque<gufunc_loop> m_loops;
    std::mutex m_mutex;
    // (loop, nloop, staged spec) as text
    std::unordered_map<std::string, std::unique_ptr<compiled_kernel>> m_kernels;
};

}  // namespace nu
