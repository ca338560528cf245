// src/dispatch/device_cast.h: dtype conversion of device arrays, on the device
#pragma once

#include "array/device_array.h"

namespace nu {

// dst[...] = src[...] converted to dst's dtype (NumPy's C casts), with an elementwise kernel:
// device data never makes a host round trip to change type. Shapes must match.
void cast_into(const device_array& dst, const device_array& src, const stream_ref& stream);

// A new C-ordered array holding `src` converted to `to`.
device_array cast_to(const device_array& src, dtype to, const stream_ref& stream);

}  // namespace nu
