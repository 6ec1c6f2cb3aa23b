// SPDX-License-Identifier: Apache-2.0
// Host memory for tensor data. Blocks of 64 KiB and more are kept when freed and handed out again for
// the next request of the same size, so a loop that makes fresh tensors of the same shapes
// does not pay the kernel's page faults (and zeroing) on every iteration; bytes are not
// initialized. Like malloc, the pool is shared by the whole process (it holds no program
// state, only free memory), and it is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace tl::host_memory {

void* allocate(std::size_t bytes);
void release(void* p, std::size_t bytes);

struct PoolStats {
  std::size_t cached_bytes = 0;   // free blocks held for reuse
  std::size_t reuses = 0;         // allocations served from the pool
  std::size_t in_use_bytes = 0;   // allocated and not yet released (rounded sizes)
  std::size_t peak_bytes = 0;     // the most in use at once since the last reset_peak
};
PoolStats stats();
// Starts measuring the peak again from what is in use now.
void reset_peak();
// Returns every cached block to the system.
void trim();

// An allocator for std::vector that draws from the pool and leaves elements uninitialized
// when value-constructed.
template <class T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U>&) {}  // NOLINT: converting, as allocators must
  T* allocate(std::size_t n) { return static_cast<T*>(host_memory::allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) { host_memory::release(p, n * sizeof(T)); }
  template <class U>
  void construct(U* p) noexcept {
    static_assert(std::is_trivially_default_constructible_v<U>);
    // default-initialize: no zeroing
    (void)p;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const Allocator<U>&) const { return true; }
};

using Bytes = std::vector<std::uint8_t, Allocator<std::uint8_t>>;

}  // namespace tl::host_memory
