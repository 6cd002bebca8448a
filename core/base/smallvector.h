// SPDX-License-Identifier: MIT
// A vector of trivially copyable elements that keeps up to N of them inside the object (no heap allocation) and
// spills to the heap beyond that. Program nodes hold four short lists each (dependencies, buffers read and
// written: one to three entries for almost every node); as std::vector every list cost 24 bytes plus a heap block,
// about half of a node's memory. With N = 3 four-byte ids the object is 16 bytes and no list of three or fewer
// allocates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <vector>

namespace stagecraft {

template <typename T, uint32_t N> class SmallVector
{
    static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable elements only");
    static_assert(N > 0, "at least one element inline");
    static constexpr size_t kInlineBytes = std::max(N * sizeof(T), sizeof(void*));

public:
    SmallVector() = default;
    SmallVector(std::initializer_list<T> values)
    {
        assign(values.begin(), values.end());
    }
    SmallVector(const std::vector<T>& values) // NOLINT(google-explicit-constructor): a drop-in for std::vector
    {
        assign(values.data(), values.data() + values.size());
    }
    SmallVector(const SmallVector& other)
    {
        assign(other.begin(), other.end());
    }
    SmallVector(SmallVector&& other) noexcept
    {
        std::memcpy(m_storage, other.m_storage, kInlineBytes);
        m_size = other.m_size;
        other.m_size = 0; // the heap block, if any, now belongs to this
    }
    SmallVector& operator=(const SmallVector& other)
    {
        if (this != &other)
            assign(other.begin(), other.end());
        return *this;
    }
    SmallVector& operator=(SmallVector&& other) noexcept
    {
        if (this != &other) {
            release();
            std::memcpy(m_storage, other.m_storage, kInlineBytes);
            m_size = other.m_size;
            other.m_size = 0;
        }
        return *this;
    }
    SmallVector& operator=(const std::vector<T>& values)
    {
        assign(values.data(), values.data() + values.size());
        return *this;
    }
    SmallVector& operator=(std::initializer_list<T> values)
    {
        assign(values.begin(), values.end());
        return *this;
    }
    ~SmallVector()
    {
        release();
    }

    uint32_t size() const
    {
        return m_size;
    }
    bool empty() const
    {
        return m_size == 0;
    }
    T* data()
    {
        return onHeap() ? heap()->values() : reinterpret_cast<T*>(m_storage);
    }
    const T* data() const
    {
        return onHeap() ? heap()->values() : reinterpret_cast<const T*>(m_storage);
    }
    T* begin()
    {
        return data();
    }
    T* end()
    {
        return data() + m_size;
    }
    const T* begin() const
    {
        return data();
    }
    const T* end() const
    {
        return data() + m_size;
    }
    T& operator[](size_t i)
    {
        return data()[i];
    }
    const T& operator[](size_t i) const
    {
        return data()[i];
    }
    T& front()
    {
        return data()[0];
    }
    const T& front() const
    {
        return data()[0];
    }
    T& back()
    {
        return data()[m_size - 1];
    }
    const T& back() const
    {
        return data()[m_size - 1];
    }

    void push_back(const T& value) // NOLINT(readability-identifier-naming): std::vector's name
    {
        const T copy = value; // value may live in this vector
        if (m_size < N) {
            reinterpret_cast<T*>(m_storage)[m_size++] = copy;
            return;
        }
        Heap* h = nullptr;
        if (m_size == N) { // spill the inline elements
            h = allocate(std::max<uint32_t>(2 * N, 4));
            std::memcpy(h->values(), m_storage, N * sizeof(T));
            setHeap(h);
        } else if (h = heap(); m_size == h->capacity) {
            Heap* bigger = allocate(2 * m_size);
            std::memcpy(bigger->values(), h->values(), m_size * sizeof(T));
            std::free(h);
            setHeap(h = bigger);
        }
        h->values()[m_size++] = copy;
    }
    /// Removes [first, last) and keeps the order of the rest.
    T* erase(const T* first, const T* last)
    {
        T* base = data();
        const auto from = static_cast<uint32_t>(first - base);
        const auto count = static_cast<uint32_t>(last - first);
        std::memmove(base + from, base + from + count, (m_size - from - count) * sizeof(T));
        shrinkTo(m_size - count);
        return data() + from;
    }
    void clear()
    {
        shrinkTo(0);
    }

    friend bool operator==(const SmallVector& a, const SmallVector& b)
    {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    struct Heap
    {
        uint32_t capacity = 0;
        T* values()
        {
            return reinterpret_cast<T*>(reinterpret_cast<char*>(this) + kHeaderBytes);
        }
    };
    static constexpr size_t kHeaderBytes = std::max(sizeof(Heap), alignof(T));

    bool onHeap() const
    {
        return m_size > N;
    }
    Heap* heap() const
    {
        Heap* h = nullptr;
        std::memcpy(&h, m_storage, sizeof h);
        return h;
    }
    void setHeap(Heap* h)
    {
        std::memcpy(m_storage, &h, sizeof h);
    }
    static Heap* allocate(uint32_t capacity)
    {
        void* raw = std::malloc(kHeaderBytes + size_t(capacity) * sizeof(T));
        if (!raw)
            throw std::bad_alloc();
        Heap* h = new (raw) Heap;
        h->capacity = capacity;
        return h;
    }
    /// Sets the size to `size` (<= m_size); back inline when it fits again.
    void shrinkTo(uint32_t size)
    {
        if (onHeap() && size <= N) {
            Heap* h = heap();
            std::memcpy(m_storage, h->values(), size * sizeof(T));
            std::free(h);
        }
        m_size = size;
    }
    void release()
    {
        if (onHeap())
            std::free(heap());
        m_size = 0;
    }
    void assign(const T* first, const T* last)
    {
        const auto count = static_cast<uint32_t>(last - first);
        release();
        if (count > N) {
            Heap* h = allocate(count);
            std::memcpy(h->values(), first, count * sizeof(T));
            setHeap(h);
        } else if (count > 0) {
            std::memcpy(m_storage, first, count * sizeof(T));
        }
        m_size = count;
    }

    alignas(T) unsigned char m_storage[kInlineBytes] {};
    uint32_t m_size = 0;
};

} // namespace stagecraft
