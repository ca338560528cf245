// src/compile/sha256.h: SHA-256 for cache keys and cache-entry checksums
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nu {

class sha256 {
public:
    sha256();
    sha256& update(const void* data, std::size_t size);
    sha256& update(const std::string& s) { return update(s.data(), s.size()); }
    // Feeds the length first so that ("ab", "c") and ("a", "bc") hash differently.
    sha256& update_field(const std::string& s);
    std::array<std::uint8_t, 32> digest();
    std::string hex_digest();

private:
    void compress(const std::uint8_t* block);
    std::uint32_t m_state[8];
    std::uint8_t m_buffer[64];
    std::size_t m_buffered = 0;
    std::uint64_t m_length = 0;
};

}  // namespace nu
