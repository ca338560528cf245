// src/array/dtype.cpp: element type table
#include "array/dtype.h"

#include <array>
#include <atomic>
#include <mutex>

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

struct record_row {
    std::string key;
    std::string name;
    std::size_t size = 0;
    std::string typestr;  // "|V<size>" for records, "<M8[D]" for datetimes
};

// Rows are written once, under the mutex, before their id is handed out; ids only grow.
std::mutex g_record_mutex;
std::array<record_row, k_max_records> g_records;
std::atomic<int> g_record_count{0};

const record_row& record(dtype t) {
    const int k = static_cast<int>(t) - k_first_record;
    NU_ASSERT(k >= 0 && k < g_record_count.load(std::memory_order_acquire));
    return g_records[static_cast<std::size_t>(k)];
}

const dtype_row& row(dtype t) {
    NU_ASSERT(static_cast<int>(t) < k_dtype_count);
    return k_rows[static_cast<int>(t)];
}

bool little_endian_host() {
    const std::uint16_t probe = 1;
    return *reinterpret_cast<const std::uint8_t*>(&probe) == 1;
}

}  // namespace

namespace {

dtype register_dtype(const std::string& key, std::size_t size, const std::string& name,
                     const std::string& type_string) {
    std::lock_guard<std::mutex> lock(g_record_mutex);
    const int n = g_record_count.load(std::memory_order_relaxed);
    for (int k = 0; k < n; ++k) {
        if (g_records[static_cast<std::size_t>(k)].key == key) return static_cast<dtype>(k_first_record + k);
    }
    if (n == k_max_records) {
        throw type_error("record dtype " + name + ": this process already uses " + std::to_string(k_max_records) +
                         " distinct record dtypes, the most the engine holds");
    }
    g_records[static_cast<std::size_t>(n)] = record_row{key, name, size, type_string};
    g_record_count.store(n + 1, std::memory_order_release);
    return static_cast<dtype>(k_first_record + n);
}

}  // namespace

dtype record_dtype(const std::string& key, std::size_t size, const std::string& name) {
    return register_dtype(key, size, name, "|V" + std::to_string(size));
}

dtype datetime_dtype(const std::string& typestr, const std::string& name) {
    return register_dtype(typestr, 8, name, typestr);
}

dtype chars_dtype(const std::string& typestr, std::size_t size, const std::string& name) {
    return register_dtype(typestr, size, name, typestr);
}

bool is_chars(dtype t) {
    if (!is_record(t)) return false;
    const char kind = record(t).typestr[1];
    return kind == 'S' || kind == 'U';
}

bool is_datetime(dtype t) {
    if (!is_record(t)) return false;
    const char kind = record(t).typestr[1];
    return kind == 'M' || kind == 'm';
}

std::size_t itemsize(dtype t) { return is_record(t) ? record(t).size : row(t).size; }

const char* dtype_name(dtype t) { return is_record(t) ? record(t).name.c_str() : row(t).name; }

std::string typestr(dtype t) {
    if (is_record(t)) return record(t).typestr;
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
