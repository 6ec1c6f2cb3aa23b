// SPDX-License-Identifier: Apache-2.0
// The GPU toolchain on this machine, as code generation needs it: NVIDIA's libdevice (from the
// CUDA toolkit) and ld.lld to link AMDGPU code objects. Codegen receives what is found here
// (codegen::Toolchain) and looks nothing up itself; where to look comes from the host
// (ToolchainSettings), so nothing here reads the environment.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/llvm_emit.h"

namespace tl::runtime {

// Where to look for the toolchain, as the host chose. The API layer fills it from CUDA_HOME,
// CUDA_PATH, TENSORLISP_LD_LLD and PATH (api/devices.cpp); the default looks only in the
// fixed places below.
struct ToolchainSettings {
  // CUDA toolkit folders to look for libdevice in, first first, before /usr/local/cuda and
  // /usr/lib/cuda (CUDA_HOME, then CUDA_PATH). Empty entries are passed over.
  std::vector<std::string> cuda_dirs;
  // The ld.lld to link AMDGPU code objects with (TENSORLISP_LD_LLD); "": lld's library in
  // this process when the build has it (have_linker_library), else search for ld.lld.
  std::string ld_lld;
  // The folders to search for ld.lld, first first (PATH, split at ':').
  std::vector<std::string> search_path;
};

// The path of NVIDIA's libdevice.10.bc under the first of settings.cuda_dirs, /usr/local/cuda
// and /usr/lib/cuda that has it (nvvm/libdevice/), or "" when none does.
std::string find_libdevice(const ToolchainSettings& settings);

// The ld.lld to link AMDGPU code objects with: settings.ld_lld, else the first of ld.lld,
// ld.lld-<LLVM version> found in settings.search_path (or in LLVM's own folder); "" when
// there is none.
std::string find_ld_lld(const ToolchainSettings& settings);

// An AMDGPU object file linked by the ld.lld at `ld` into a shared code object (what the HIP
// runtime loads). Throws std::runtime_error naming kernel `entry` when `ld` is "" (no ld.lld)
// or it fails.
std::string link_code_object(const std::string& ld, const std::string& object, const std::string& entry);

// Whether this build links lld's library (liblld-<LLVM version>-dev at configure time), so
// AMDGPU code objects are linked without starting a process.
bool have_linker_library();

// `object` linked into a shared code object by lld's library, in this process (one link at
// a time). Throws std::runtime_error naming kernel `entry` when lld reports an error, or
// when the build has no lld library.
std::string link_code_object_in_process(const std::string& object, const std::string& entry);

// The toolchain `settings` point at: libdevice found now; lld's library when the build has
// it and settings.ld_lld is "", else the ld.lld found when first linking.
codegen::Toolchain find_toolchain(const ToolchainSettings& settings);

// make_codegen (llvm_emit.h) for `target` with the toolchain `settings` point at.
std::unique_ptr<codegen::Codegen> make_codegen(const std::string& target, const ToolchainSettings& settings);

}  // namespace tl::runtime
