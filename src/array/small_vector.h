// src/array/small_vector.h: a vector with inline storage, for shapes and strides
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <type_traits>

namespace nu {

// Shapes and strides have a handful of entries and are built on every ufunc call: keeping
// up to N of them inline removes most heap allocations from the call path (measured: malloc
// and free were a quarter of the per-call time with std::vector). Heap storage takes over
// beyond N (NumPy allows 64 dimensions). Trivially copyable elements only.
template <class T, std::size_t N>
class small_vector {
    static_assert(std::is_trivially_copyable_v<T>, "small_vector holds trivially copyable values");

public:
    using value_type = T;
    using size_type = std::size_t;
    using iterator = T*;
    using const_iterator = const T*;

    small_vector() = default;
    explicit small_vector(size_type n, const T& value = T()) { resize(n, value); }
    small_vector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
    template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
    small_vector(It first, It last) {
        assign(first, last);
    }
    small_vector(const small_vector& o) { assign(o.begin(), o.end()); }
    small_vector(small_vector&& o) noexcept { take(o); }
    small_vector& operator=(const small_vector& o) {
        if (this != &o) assign(o.begin(), o.end());
        return *this;
    }
    small_vector& operator=(small_vector&& o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }
    ~small_vector() { release(); }

    template <class It>
    void assign(It first, It last) {
        m_size = 0;
        reserve(static_cast<size_type>(std::distance(first, last)));
        for (; first != last; ++first) m_data[m_size++] = static_cast<T>(*first);
    }
    void reserve(size_type n) {
        if (n <= m_capacity) return;
        T* p = new T[n];
        std::copy(m_data, m_data + m_size, p);
        release();
        m_data = p;
        m_capacity = n;
    }
    void resize(size_type n, const T& value = T()) {
        reserve(n);
        for (size_type i = m_size; i < n; ++i) m_data[i] = value;
        m_size = n;
    }
    void push_back(const T& value) {
        if (m_size == m_capacity) reserve(m_capacity * 2);
        m_data[m_size++] = value;
    }
    void pop_back() { --m_size; }
    void clear() { m_size = 0; }

    size_type size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    T* data() { return m_data; }
    const T* data() const { return m_data; }
    T& operator[](size_type i) { return m_data[i]; }
    const T& operator[](size_type i) const { return m_data[i]; }
    T& back() { return m_data[m_size - 1]; }
    const T& back() const { return m_data[m_size - 1]; }
    iterator begin() { return m_data; }
    iterator end() { return m_data + m_size; }
    const_iterator begin() const { return m_data; }
    const_iterator end() const { return m_data + m_size; }

    friend bool operator==(const small_vector& a, const small_vector& b) {
        return a.m_size == b.m_size && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator!=(const small_vector& a, const small_vector& b) { return !(a == b); }

private:
    void release() {
        if (m_data != m_inline) delete[] m_data;
        m_data = m_inline;
        m_capacity = N;
    }
    void take(small_vector& o) {
        m_size = o.m_size;
        if (o.m_data == o.m_inline) {
            std::copy(o.m_inline, o.m_inline + o.m_size, m_inline);
        } else {
            m_data = o.m_data;
            m_capacity = o.m_capacity;
            o.m_data = o.m_inline;
            o.m_capacity = N;
        }
        o.m_size = 0;
    }

    T m_inline[N];
    T* m_data = m_inline;
    size_type m_size = 0;
    size_type m_capacity = N;
};

}  // namespace nu
