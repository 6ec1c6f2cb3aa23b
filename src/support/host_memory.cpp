// SPDX-License-Identifier: Apache-2.0
// The host memory pool: exact-size free lists for blocks of 64 KiB and more.
#include "support/host_memory.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace tl::host_memory {

namespace {

constexpr std::size_t kPooledFrom = std::size_t{64} << 10;  // smaller blocks go to malloc
constexpr std::size_t kAlign = 64;
constexpr std::size_t kPageAlign = 4096;
constexpr std::size_t kMaxCached = std::size_t{2} << 30;  // free memory kept, at most

struct Pool {
  std::mutex mu;
  std::multimap<std::size_t, void*> free_blocks;  // by size
  std::size_t cached = 0;
  std::size_t reuses = 0;
};

std::atomic<std::size_t> in_use{0}, peak{0};

void count_allocation(std::size_t size) {
  std::size_t now = in_use.fetch_add(size) + size;
  std::size_t p = peak.load();
  while (now > p && !peak.compare_exchange_weak(p, now)) {
  }
}

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: blocks may be released during exit
  return *p;
}

std::size_t rounded(std::size_t bytes) {
  std::size_t align = bytes >= kPooledFrom ? kPageAlign : kAlign;
  return (bytes + align - 1) / align * align;
}

// Large blocks come straight from the kernel, asking for huge pages: a fresh 64 MiB tensor
// then costs 32 page faults instead of 16384.
void* map_pages(std::size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    trim();  // give back what the pool holds, then try once more
    p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
  }
  madvise(p, size, MADV_HUGEPAGE);
  return p;
}

void unmap_pages(void* p, std::size_t size) { munmap(p, size); }

}  // namespace

namespace {

void* allocate_block(std::size_t size) {
  if (size >= kPooledFrom) {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mu);
    auto it = p.free_blocks.find(size);
    if (it != p.free_blocks.end()) {
      void* block = it->second;
      p.free_blocks.erase(it);
      p.cached -= size;
      ++p.reuses;
      return block;
    }
  }
  if (size >= kPooledFrom) return map_pages(size);
  void* block = std::aligned_alloc(kAlign, size);
  if (block == nullptr) throw std::bad_alloc();
  return block;
}

}  // namespace

void* allocate(std::size_t bytes) {
  std::size_t size = rounded(bytes == 0 ? 1 : bytes);
  void* block = allocate_block(size);
  count_allocation(size);
  return block;
}

void release(void* block, std::size_t bytes) {
  if (block == nullptr) return;
  std::size_t size = rounded(bytes == 0 ? 1 : bytes);
  in_use.fetch_sub(size);
  if (size >= kPooledFrom) {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.cached + size <= kMaxCached) {
      p.free_blocks.emplace(size, block);
      p.cached += size;
      return;
    }
    unmap_pages(block, size);
    return;
  }
  std::free(block);
}

PoolStats stats() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  return PoolStats{p.cached, p.reuses, in_use.load(), peak.load()};
}

void reset_peak() { peak.store(in_use.load()); }

void trim() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  for (auto& [size, block] : p.free_blocks) unmap_pages(block, size);
  p.free_blocks.clear();
  p.cached = 0;
}

}  // namespace tl::host_memory
