// SPDX-License-Identifier: Apache-2.0
// LLVM code generation: a loop-IR kernel becomes an LLVM module, optimized for a target
// machine and emitted as the code a backend loads (an object file, PTX, a code object).
//
// CPU kernels have one entry point:
//   void entry(void** buffers, const int64_t* vars, int64_t begin, int64_t end)
// which runs iterations [begin, end) of the kernel's parallel (outermost) loop.
//
// Where the parts live: emitter.cpp builds the IR for every target, asking what differs of an
// EmitTarget (target.h); target_x86.cpp, target_nvptx.cpp, target_amdgpu.cpp and
// target_sim.cpp hold each target and its Codegen class; math_lib.cpp the exp2, log2 and sin
// the targets emit inline; llvm_emit.cpp the optimization and emission they share.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "codegen/loop_ir.h"
#include "codegen/lower.h"

namespace tl::codegen {

struct CompileOutput {
  std::string object;   // what the backend loads: an ELF object (CPU), PTX text, an AMDGPU code object
  std::string ir;       // the optimized LLVM IR, when asked for
};

// Code generation for one target, as the JIT uses it.
class Codegen {
 public:
  virtual ~Codegen() = default;
  // Identifies the generated code (target, CPU or architecture, LLVM version, emitter
  // build): part of every cache key.
  virtual const std::string& target_id() const = 0;
  // How kernels for this target are lowered.
  virtual Lowering lowering() const = 0;
  virtual CompileOutput compile(const Kernel& k, const std::string& entry, bool want_ir) const = 0;
  // Whether compile may run on several threads at once (a beam search compiles its candidates
  // side by side).
  virtual bool concurrent() const { return false; }
};

// Links an AMDGPU object file (the bytes of an ELF relocatable) into the shared code object a
// HIP runtime loads, returning its bytes; throws std::runtime_error naming kernel `entry` when
// it cannot.
using LinkCodeObject = std::function<std::string(const std::string& object, const std::string& entry)>;

// What code generation needs of the machine's toolchain, found by the runtime
// (runtime/toolchain.h), so that codegen itself looks nothing up.
struct Toolchain {
  std::string libdevice;            // NVIDIA's libdevice.10.bc, or empty when there is none
  LinkCodeObject link_code_object;  // empty: AMDGPU kernels fail to compile, saying so
};

// When the code generator was built, for its target_id (code from an older emitter in the disk
// cache is stale): the latest of `target_stamp` (the target file's __DATE__ " " __TIME__) and
// the stamps of the files every target shares (llvm_emit.cpp, emitter.cpp, math_lib.cpp), as
// "Mmm dd yyyy hh:mm:ss".
std::string emitter_build(const char* target_stamp);

// The code generator for a backend's target (tl_device_info::target): "" or "host",
// "host:CPU" (an LLVM CPU name), "nvptx:sm_XX", "amdgcn:gfxNNN", "sim:nvptx" or "sim:amdgcn". Throws std::runtime_error
// for an unknown target or one LLVM was built without.
std::unique_ptr<Codegen> make_codegen(const std::string& target, const Toolchain& toolchain);

// Whether the LLVM CPU named CPU (empty: this machine's, as host_target_machine) has integer
// dot-product instructions of bytes that EOp::Dot4 uses: AVX-512 VNNI or AVX-VNNI's vpdpbusd,
// or AVX2's vpmaddubsw and vpmaddwd.
bool cpu_has_int8_dot(const std::string& cpu = "");

class CpuCodegen : public Codegen {
 public:
  // Targets the host CPU with all its vector extensions, or the LLVM CPU named CPU (see
  // host_target_machine). Throws std::runtime_error when LLVM has no target for the host.
  explicit CpuCodegen(const std::string& cpu = "");
  ~CpuCodegen() override;
  CpuCodegen(const CpuCodegen&) = delete;
  CpuCodegen& operator=(const CpuCodegen&) = delete;

  const std::string& target_id() const override;
  // For the CPU's vectors: 16 f32 lanes in 32 registers with AVX-512, else 8 in 16.
  Lowering lowering() const override;
  CompileOutput compile(const Kernel& k, const std::string& entry, bool want_ir) const override;
  bool concurrent() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// PTX for NVIDIA GPUs through LLVM's NVPTX target, from the same emitter. Kernels are lowered
// for a GPU (lower.h): the entry takes buffers and sizes as kernel parameters, and the thread
// loops (gpu_thread_loops) run one iteration per thread, blockIdx.x * blockDim.x +
// threadIdx.x from begin, below end. sin, and exp2/log2 of f64, call NVIDIA's libdevice,
// linked from `libdevice` (the path of the CUDA toolkit's libdevice.10.bc; when empty, kernels
// that need it fail to compile, saying so).
class PtxCodegen : public Codegen {
 public:
  explicit PtxCodegen(const std::string& arch = "sm_80", std::string libdevice = "");
  ~PtxCodegen() override;
  PtxCodegen(const PtxCodegen&) = delete;
  PtxCodegen& operator=(const PtxCodegen&) = delete;
  const std::string& target_id() const override;
  Lowering lowering() const override { return Target::Gpu; }
  // The PTX text (NUL-terminated, as cuModuleLoadData wants it) in `object`.
  CompileOutput compile(const Kernel& k, const std::string& entry, bool want_ir) const override;
  std::string compile(const Kernel& k, const std::string& entry) const { return compile(k, entry, false).object; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// AMDGPU code objects (amdgcn-amd-amdhsa, for one gfx architecture) through LLVM's AMDGPU
// target, from the same emitter, linked into a shared code object by `link` (the runtime's
// uses ld.lld: runtime/toolchain.h), as hipModuleLoadData loads it.
// Kernels run in blocks of kAmdgpuBlockSize threads: the backend must launch them so.
// sin, exp2 and log2 use the target's f32 instructions; those of f64 are not supported yet
// (they need ROCm's device libraries) and fail to compile with a message saying so.
constexpr int kAmdgpuBlockSize = 256;
class AmdgpuCodegen : public Codegen {
 public:
  explicit AmdgpuCodegen(const std::string& arch = "gfx90a", LinkCodeObject link = nullptr);
  ~AmdgpuCodegen() override;
  AmdgpuCodegen(const AmdgpuCodegen&) = delete;
  AmdgpuCodegen& operator=(const AmdgpuCodegen&) = delete;
  const std::string& target_id() const override;
  Lowering lowering() const override { return Target::Gpu; }
  CompileOutput compile(const Kernel& k, const std::string& entry, bool want_ir) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// GPU kernels for the CPU backend's SIMT simulator (its option sim=nvptx or sim=amdgcn):
// lowered as for a GPU, with thread groups of kSimGroup threads, splitting every reduce it
// can; compiled for the host with the CPU entry point, the body asking the simulator for its
// block and thread, shared memory, barriers and warp shuffles (tl_sim_* functions). `flavor`
// picks whose group combine is emitted: "nvptx" (warp shuffles, then shared memory) or
// "amdgcn" (a tree in shared memory). It runs the GPU code paths where there is no GPU.
constexpr int kSimGroup = 64;
class SimCodegen : public Codegen {
 public:
  explicit SimCodegen(const std::string& flavor = "nvptx");
  ~SimCodegen() override;
  SimCodegen(const SimCodegen&) = delete;
  SimCodegen& operator=(const SimCodegen&) = delete;
  const std::string& target_id() const override;
  Lowering lowering() const override;
  CompileOutput compile(const Kernel& k, const std::string& entry, bool want_ir) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tl::codegen
