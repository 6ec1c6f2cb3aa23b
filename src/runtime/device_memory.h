// SPDX-License-Identifier: Apache-2.0
// Memory of a device that has its own (a GPU's), for the JIT: blocks are kept when freed and
// handed out again for requests of the same rounded size, so a loop that makes tensors of the
// same shapes allocates from the driver only on its first iteration. When the device is
// full, the kept blocks are freed and the request tried again before it fails.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "tensor/graph.h"

namespace tl::runtime {

class DeviceMemory : public std::enable_shared_from_this<DeviceMemory> {
 public:
  explicit DeviceMemory(std::shared_ptr<Backend> backend) : backend_(std::move(backend)) {}
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // `bytes` of device memory (at least one byte's block), for `what` (named in the error).
  // A device-error saying how much was asked, how much is in use and the device's size when
  // the device has no room.
  std::shared_ptr<tensor::DeviceCopy> allocate(std::size_t bytes, const std::string& what);
  // The buffer's device copy, made (and uploaded) when it has none from this device. Kernels'
  // results are buffers with a device copy only (Buffer::set_device): the host reads them
  // through it.
  const std::shared_ptr<tensor::DeviceCopy>& upload(const tensor::Buffer& b);

  std::size_t in_use_bytes() const { return in_use_; }
  std::size_t cached_bytes() const { return cached_; }
  // Copies to and from the device, and their bytes.
  struct Traffic {
    std::uint64_t uploads = 0, upload_bytes = 0, downloads = 0, download_bytes = 0;
  };
  const Traffic& traffic() const { return traffic_; }
  // Frees every kept block.
  void trim();

  // Sizes are rounded up to this granule (and to 1/8 of their power of two above 1 MiB), so
  // that blocks of nearly equal sizes are reused for each other.
  static std::size_t round_size(std::size_t bytes);

 private:
  struct Block;
  friend struct Block;
  void release(void* ptr, std::size_t size);
  std::shared_ptr<Backend> backend_;
  std::map<std::size_t, std::vector<void*>> free_;  // kept blocks by rounded size
  std::size_t in_use_ = 0;
  std::size_t cached_ = 0;
  Traffic traffic_;
};

}  // namespace tl::runtime
