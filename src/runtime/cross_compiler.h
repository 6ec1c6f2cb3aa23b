// SPDX-License-Identifier: Apache-2.0
// Cross-compilation: every kernel a JIT device lowers is also lowered and compiled for other
// targets (JitSettings::cross_targets, TENSORLISP_CROSS_TARGETS), into DIR/<target>/NAME.ptx,
// NAME.hsaco or NAME.o, or NAME.error saying why the target could not have it. It checks code
// generation for devices this machine lacks (tests/run_cross_check.cmake runs the suite so).
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "codegen/llvm_emit.h"
#include "runtime/toolchain.h"
#include "schedule/schedule.h"

namespace tl::runtime {

class CrossCompiler {
 public:
  // A device-error naming the target that this build cannot generate code for.
  CrossCompiler(const std::vector<std::string>& targets, std::string dir, const ToolchainSettings& toolchain);
  // Lowers and compiles kernel SK (of a schedule whose materialized nodes are MATERIALIZED) for
  // every target, unless its file is there already; failures are logged, never thrown.
  void compile(const schedule::ScheduledKernel& sk, const std::unordered_set<const tensor::Node*>& materialized) const;

 private:
  std::vector<std::unique_ptr<codegen::Codegen>> targets_;
  std::string dir_;
};

}  // namespace tl::runtime
