// SPDX-License-Identifier: Apache-2.0
// A lowering pass for GPU kernels: the reduces of a kernel split across a group of threads per
// output when that pays (Lowering::group, min_group_reduce, few_threads), their accumulators
// combined across the group (Stmt::Kind::GroupCombine). Runs after lower() builds the kernel.
#pragma once

#include "codegen/loop_ir.h"
#include "codegen/lower.h"

namespace tl::codegen {

void split_reduces(Kernel& k, const Lowering& how);

}  // namespace tl::codegen
