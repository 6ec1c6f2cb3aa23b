// SPDX-License-Identifier: Apache-2.0
#include "runtime/device_memory.h"

#include <bit>
#include <cstdio>

#include "support/condition_error.h"

namespace tl::runtime {

struct DeviceMemory::Block : tensor::DeviceCopy {
  std::shared_ptr<DeviceMemory> owner;
  std::size_t size = 0;
  ~Block() override { owner->release(ptr, size); }
  void download(void* dst, std::size_t bytes) const override {
    owner->backend_->copy_out(dst, ptr, bytes);
    ++owner->traffic_.downloads;
    owner->traffic_.download_bytes += bytes;
  }
};

DeviceMemory::~DeviceMemory() { trim(); }

std::size_t DeviceMemory::round_size(std::size_t bytes) {
  constexpr std::size_t kGranule = 512;
  bytes = std::max<std::size_t>(bytes, 1);
  if (bytes > (std::size_t{1} << 20)) {
    const std::size_t step = std::bit_ceil(bytes) / 8;
    return (bytes + step - 1) / step * step;
  }
  return (bytes + kGranule - 1) / kGranule * kGranule;
}

std::shared_ptr<tensor::DeviceCopy> DeviceMemory::allocate(std::size_t bytes, const std::string& what) {
  const std::size_t size = round_size(bytes);
  void* p = nullptr;
  if (auto it = free_.find(size); it != free_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    cached_ -= size;
  } else {
    p = backend_->alloc(size);
    if (p == nullptr && cached_ > 0) {
      trim();
      p = backend_->alloc(size);
    }
    if (p == nullptr) {
      auto mib = [](std::size_t n) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(n) / (1 << 20));
        return std::string(text);
      };
      throw ConditionError("device-error", backend_->name() + ": out of device memory: " + what + " needs " + mib(bytes) +
                                               ", with " + mib(in_use_) + " in use by tensors of a " +
                                               mib(backend_->info().memory_bytes) + " device" +
                                               (backend_->error()[0] ? std::string(" (") + backend_->error() + ")" : std::string()));
    }
  }
  in_use_ += size;
  auto block = std::make_shared<Block>();
  block->ptr = p;
  block->pool = this;
  block->owner = shared_from_this();
  block->size = size;
  return block;
}

void DeviceMemory::release(void* ptr, std::size_t size) {
  in_use_ -= size;
  free_[size].push_back(ptr);
  cached_ += size;
}

void DeviceMemory::trim() {
  for (auto& [size, blocks] : free_) {
    for (void* p : blocks) backend_->free(p);
  }
  free_.clear();
  cached_ = 0;
}

const std::shared_ptr<tensor::DeviceCopy>& DeviceMemory::upload(const tensor::Buffer& b) {
  if (!b.device || b.device->pool != this) {
    // The host bytes first: they may still be on another device.
    const void* host = b.data();
    std::shared_ptr<tensor::DeviceCopy> copy = allocate(b.size_bytes(), "a " + std::to_string(b.size_bytes()) + "-byte tensor");
    if (b.size_bytes() != 0) backend_->copy_in(copy->ptr, host, b.size_bytes());
    ++traffic_.uploads;
    traffic_.upload_bytes += b.size_bytes();
    b.device = std::move(copy);
  }
  return b.device;
}

}  // namespace tl::runtime
