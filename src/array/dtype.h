// src/array/dtype.h: the element types ufuncs can use, and their NumPy typestr spelling
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nu {

enum class dtype : std::uint8_t {
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float32, float64, complex64, complex128,
    float16,   // NumPy's half, CUDA's __half layout
    bfloat16,  // ml_dtypes.bfloat16 (typestr '<V2', NumPy's spelling of it), __nv_bfloat16 layout
};
constexpr int k_dtype_count = 15;

// Record (structured) dtypes: ids from k_first_record up, handed out as each distinct layout
// is first seen (the bindings key them by NumPy's description). The engine only moves their
// bytes and compares ids; the translator reads their fields. No cast or reduction takes
// them: the tables below refuse them, so a ufunc call names its input's dtype.
// datetime64[unit] and timedelta64[unit] are registered the same way (kind 'M' or 'm',
// typestr "<M8[D]"): 8-byte values the engine moves and matches by id, held as int64 in
// kernels, where the translator gives them NumPy's arithmetic. Loops may take them.
constexpr int k_first_record = 32;
constexpr int k_max_records = 224;
inline bool is_record(dtype t) { return static_cast<int>(t) >= k_first_record; }
// The id of the record dtype described by `key`, `size` bytes long, printed as `name`;
// registered on first use. Throws type_error once k_max_records layouts are in use.
dtype record_dtype(const std::string& key, std::size_t size, const std::string& name);
// The id of datetime64/timedelta64 dtype `typestr` ("<M8[D]", "<m8[us]"), printed as `name`.
dtype datetime_dtype(const std::string& typestr, const std::string& name);
// Whether a registered id is a datetime64/timedelta64 dtype (an int64 in kernels).
bool is_datetime(dtype t);
// The id of fixed-width bytes or str dtype `typestr` ("|S12", "<U12"), `size` bytes long,
// printed as `name`. Kernels store constants into their elements (Numba's CharSeq and
// UnicodeCharSeq); the engine moves their bytes like a record's.
dtype chars_dtype(const std::string& typestr, std::size_t size, const std::string& name);
bool is_chars(dtype t);

std::size_t itemsize(dtype t);
const char* dtype_name(dtype t);   // "float32"
std::string typestr(dtype t);      // array-interface spelling, "<f4" (native order)
// Parses a typestr ("<f4", "|b1", "=i8"); throws type_error naming `what` for others.
dtype dtype_from_typestr(std::string_view s, const char* what);

}  // namespace nu
