// src/array/dtype.cpp: element type table
#include "array/dtype.h"

#include "runtime/errors.h"

namespace nu {
namespace {

struct dtype_row {
    dtype type;
    char kind;
    std::size_t size;
    const char* name;
};

constexpr dtype_row k_rows[] = {
    {dtype::bool_, 'b', 1, "bool"},          {dtype::int8, 'i', 1, "int8"},
    {dtype::int16, 'i', 2, "int16"},         {dtype::int32, 'i', 4, "int32"},
    {dtype::int64, 'i', 8, "int64"},         {dtype::uint8, 'u', 1, "uint8"},
    {dtype::uint16, 'u', 2, "uint16"},       {dtype::uint32, 'u', 4, "uint32"},
    {dtype::uint64, 'u', 8, "uint64"},       {dtype::float32, 'f', 4, "float32"},
    {dtype::float64, 'f', 8, "float64"},     {dtype::complex64, 'c', 8, "complex64"},
    {dtype::complex128, 'c', 16, "complex128"}, {dtype::float16, 'f', 2, "float16"},
    {dtype::bfloat16, 'V', 2, "bfloat16"},
};

const dtype_row& row(dtype t) { return k_rows[static_cast<int>(t)]; }

bool little_endian_host() {
    const std::uint16_t probe = 1;
    return *reinterpret_cast<const std::uint8_t*>(&probe) == 1;
}

}  // namespace

std::size_t itemsize(dtype t) { return row(t).size; }

const char* dtype_name(dtype t) { return row(t).name; }

std::string typestr(dtype t) {
    const dtype_row& r = row(t);
    const char order = r.size == 1 ? '|' : (little_endian_host() ? '<' : '>');
    return std::string{order, r.kind} + std::to_string(r.size);
}

dtype dtype_from_typestr(std::string_view s, const char* what) {
    const char native = little_endian_host() ? '<' : '>';
    if (s.size() >= 3 && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) {
        const char order = s[0] == '=' ? native : s[0];
        const char kind = s[1];
        std::size_t size = 0;
        for (char c : s.substr(2)) {
            if (c < '0' || c > '9') {
                size = 0;
                break;
            }
            size = size * 10 + static_cast<std::size_t>(c - '0');
        }
        for (const dtype_row& r : k_rows) {
            if (r.kind == kind && r.size == size && (size == 1 || order == native)) {
                return r.type;
            }
        }
    }
    throw type_error(std::string(what) + ": unsupported dtype '" + std::string(s) +
                     "' (supported: bool, int8..int64, uint8..uint64, float16, float32, float64, "
                     "complex64, complex128, bfloat16 in native byte order)");
}

}  // namespace nu
