// SPDX-License-Identifier: Apache-2.0
#include "runtime/plan_memory.h"

namespace tl::runtime {

namespace {

// Every buffer has at least one element's worth of readable memory, so a load under an
// invalid (padded) index, redirected to element 0, stays in bounds even for empty tensors.
alignas(64) const std::uint8_t kZeros[64] = {};

}  // namespace

std::shared_ptr<tensor::Buffer> HostPlanMemory::allocate(tensor::DType t, const std::vector<std::int64_t>& dims,
                                                         const std::function<std::string()>&) {
  return tensor::allocate_buffer(t, dims);
}

void* HostPlanMemory::pointer(tensor::Buffer& b) {
  return b.size_bytes() == 0 ? const_cast<std::uint8_t*>(kZeros) : b.data();
}

void* HostPlanMemory::pointer_to_write(tensor::Buffer& b) {
  b.prepare_write();  // never a mapped file's or a host's memory, nor memory a host has pinned
  return pointer(b);
}

void HostPlanMemory::written_in_place(tensor::Buffer& b) {
  b.device.reset();  // a copy on another device is stale now
}

void HostPlanMemory::assign(tensor::Buffer& target, tensor::Buffer& value) {
  target.set_bytes(std::move(value.bytes()));
}

std::shared_ptr<tensor::Buffer> DevicePlanMemory::allocate(tensor::DType t, const std::vector<std::int64_t>& dims,
                                                           const std::function<std::string()>& what) {
  std::size_t count = 1;
  for (std::int64_t d : dims) count *= static_cast<std::size_t>(d);
  const std::size_t bytes = tensor::Buffer::checked_bytes(t, count);
  // On the device only, until the host reads it.
  return std::make_shared<tensor::Buffer>(t, count, memory_.allocate(bytes, what()));
}

void DevicePlanMemory::written_in_place(tensor::Buffer& b) {
  b.set_device(b.device);  // the device copy holds the data now; the host bytes are stale
}

void DevicePlanMemory::assign(tensor::Buffer& target, tensor::Buffer& value) { target.set_device(value.device); }

}  // namespace tl::runtime
