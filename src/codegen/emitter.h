// SPDX-License-Identifier: Apache-2.0
// The LLVM IR emitter shared by every target: a loop-IR kernel becomes an LLVM module, with
// what differs between targets asked of an EmitTarget (target.h).
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

#include "codegen/loop_ir.h"
#include "codegen/target.h"

namespace tl::codegen {

// A module for tm's target holding kernel k as the function `entry`, verified. Throws
// an internal error (support/check.h) when the emitted IR is invalid.
std::unique_ptr<llvm::Module> emit_module(llvm::LLVMContext& ctx, llvm::TargetMachine& tm, const Kernel& k,
                                          const std::string& entry, const EmitTarget& target);

// When emitter.cpp was compiled (__DATE__ " " __TIME__), for emitter_build (target.h).
const char* emitter_build_stamp();

}  // namespace tl::codegen
