// src/dispatch/device_cast.cpp: identity loops of the elementwise engine as type casts
#include "dispatch/device_cast.h"

#include <memory>
#include <mutex>

#include "dispatch/ufunc.h"
#include "launch/elementwise_launch.h"
#include "runtime/errors.h"

namespace nu {
namespace {

// One identity loop per target dtype; the elementwise kernel converts each element from
// the source's dtype on load and to the destination's on store.
ufunc& caster() {
    static ufunc* instance = [] {
        auto* u = new ufunc("cast", 1, target::cuda, false);
        for (int t = 0; t < k_dtype_count; ++t) {
            const dtype type = static_cast<dtype>(t);
            const std::string c = c_type_name(type);
            const std::string fn = std::string("nu_identity_") + dtype_name(type);
            u->add_loop({{type}, type, fn, "__device__ " + c + " " + fn + "(" + c + " x) { return x; }"});
        }
        return u;
    }();
    return *instance;
}

}  // namespace

void cast_into(const device_array& dst, const device_array& src, const stream_ref& stream) {
    NU_ASSERT(dst.view().shape == src.view().shape);
    operand in;
    in.where = operand::kind::device;
    in.view = src.view();
    in.device = src;
    operand out;
    out.where = operand::kind::device;
    out.view = dst.view();
    out.device = dst;
    call_plan plan;
    plan.loop = static_cast<int>(dst.view().type);  // loops are in dtype order
    plan.shape = dst.view().shape;
    plan.out_type = dst.view().type;
    caster().execute(plan, {in}, out, stream);
}

array_view copy_of(const array_view& v, bool host_memory, const stream_ref& stream,
                   operand_copies& keep) {
    if (host_memory) {
        keep.host.emplace_back(v.nbytes());
        array_view copy{keep.host.back().data(), v.type, v.shape,
                        contiguous_strides(v.shape, itemsize(v.type), 'C')};
        copy_strided(copy, v);
        return copy;
    }
    device_array copy = device_array::empty(v.shape, v.type, 'C', std::nullopt, stream, "copy");
    copy.copy_from_device(device_array(nullptr, v, stream), stream);
    keep.device.push_back(copy);
    return copy.view();
}

device_array cast_to(const device_array& src, dtype to, const stream_ref& stream) {
    device_array dst = device_array::empty(src.view().shape, to, 'C', std::nullopt, stream, "cast");
    cast_into(dst, src, stream);
    return dst;
}

}  // namespace nu
