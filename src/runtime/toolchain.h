// SPDX-License-Identifier: Apache-2.0
// The GPU toolchain on this machine, as code generation needs it: NVIDIA's libdevice (from the
// CUDA toolkit) and ld.lld to link AMDGPU code objects. Codegen receives what is found here
// (codegen::Toolchain) and looks nothing up itself.
#pragma once

#include <memory>
#include <string>

#include "codegen/llvm_emit.h"

namespace tl::runtime {

// The path of NVIDIA's libdevice.10.bc under the first of CUDA_HOME, CUDA_PATH,
// /usr/local/cuda and /usr/lib/cuda that has it (nvvm/libdevice/), or "" when none does.
std::string find_libdevice();

// The ld.lld to link AMDGPU code objects with: TENSORLISP_LD_LLD, else the first of ld.lld,
// ld.lld-<LLVM version> found on PATH (or in LLVM's own folder); "" when there is none.
std::string find_ld_lld();

// An AMDGPU object file linked by ld.lld into a shared code object (what the HIP runtime
// loads). Throws std::runtime_error naming kernel `entry` when there is no ld.lld or it fails.
std::string link_code_object(const std::string& object, const std::string& entry);

// This machine's toolchain: libdevice found now, ld.lld when first linking.
codegen::Toolchain find_toolchain();

// make_codegen (llvm_emit.h) for `target` with this machine's toolchain.
std::unique_ptr<codegen::Codegen> make_codegen(const std::string& target);

}  // namespace tl::runtime
