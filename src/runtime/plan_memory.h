// SPDX-License-Identifier: Apache-2.0
// Where a plan's buffers live while its kernels run: the one executor (JitDevice::execute)
// asks this interface for each output's memory and for the pointers kernels get, so host
// memory and a device's own memory (a GPU's) run the same code. On a device, every value is a
// buffer whose data is its device copy (leaves are uploaded once, outputs stay on the device
// until the host reads them).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device_memory.h"
#include "tensor/graph.h"

namespace tl::runtime {

class PlanMemory {
 public:
  virtual ~PlanMemory() = default;
  // Whether launches return before the kernel ends (so a run's time comes from the device).
  virtual bool asynchronous() const = 0;
  // A leaf or constant, before kernels read it (on a device: uploaded, once per buffer).
  virtual void prepare(const tensor::Buffer& b) = 0;
  // A new output of DIMS, whose kernel writes every element; WHAT names it in an error (a full
  // device).
  virtual std::shared_ptr<tensor::Buffer> allocate(tensor::DType t, const std::vector<std::int64_t>& dims,
                                                   const std::function<std::string()>& what) = 0;
  // Where kernels read and write B (never null: an empty buffer gets readable zeros).
  virtual void* pointer(tensor::Buffer& b) = 0;
  // Where a kernel that writes B in place (a view assign into its target) writes it: memory
  // the buffer owns, never outside memory (a mapped file, a host's array), which it copies first.
  virtual void* pointer_to_write(tensor::Buffer& b) { return pointer(b); }
  // B's data was written in place by a kernel (a view assign into its target).
  virtual void written_in_place(tensor::Buffer& b) = 0;
  // An assign's VALUE becomes TARGET's data, once every kernel has run.
  virtual void assign(tensor::Buffer& target, tensor::Buffer& value) = 0;
};

// Host memory: kernels read and write the buffers' bytes.
class HostPlanMemory final : public PlanMemory {
 public:
  bool asynchronous() const override { return false; }
  void prepare(const tensor::Buffer&) override {}
  std::shared_ptr<tensor::Buffer> allocate(tensor::DType t, const std::vector<std::int64_t>& dims,
                                           const std::function<std::string()>& what) override;
  void* pointer(tensor::Buffer& b) override;
  void* pointer_to_write(tensor::Buffer& b) override;
  void written_in_place(tensor::Buffer& b) override;
  void assign(tensor::Buffer& target, tensor::Buffer& value) override;
};

// A device's own memory: kernels read and write the buffers' device copies.
class DevicePlanMemory final : public PlanMemory {
 public:
  explicit DevicePlanMemory(DeviceMemory& memory) : memory_(memory) {}
  bool asynchronous() const override { return true; }
  void prepare(const tensor::Buffer& b) override { memory_.upload(b); }
  std::shared_ptr<tensor::Buffer> allocate(tensor::DType t, const std::vector<std::int64_t>& dims,
                                           const std::function<std::string()>& what) override;
  void* pointer(tensor::Buffer& b) override { return memory_.upload(b)->ptr; }
  void written_in_place(tensor::Buffer& b) override;
  void assign(tensor::Buffer& target, tensor::Buffer& value) override;

 private:
  DeviceMemory& memory_;
};

}  // namespace tl::runtime
