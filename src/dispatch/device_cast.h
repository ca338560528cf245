// src/dispatch/device_cast.h: dtype conversion of device arrays, on the device
#pragma once

#include <vector>

#include "array/device_array.h"

namespace nu {

// dst[...] = src[...] converted to dst's dtype (NumPy's C casts), with an elementwise kernel:
// device data never makes a host round trip to change type. Shapes must match.
void cast_into(const device_array& dst, const device_array& src, const stream_ref& stream);

// A new C-ordered array holding `src` converted to `to`.
device_array cast_to(const device_array& src, dtype to, const stream_ref& stream);

// Private copies of operands that overlap an output (NumPy reads such inputs from a copy).
// Host-backend launches read host memory, so their copies are host buffers; GPU launches
// get device copies, made on the device.
struct operand_copies {
    std::vector<device_array> device;
    std::vector<std::vector<char>> host;
};
array_view copy_of(const array_view& v, bool host_memory, const stream_ref& stream,
                   operand_copies& keep);

}  // namespace nu
